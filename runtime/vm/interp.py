"""The ProseScript interpreter over the compiled intent's lowered script (plain data).

Each script node is an object whose `t` names its IR class (compiler/prosescript/ir.py).
Values are JSON values. Every effect (a `call`, `session`/`resume`, a discretion
question) is a step with a deterministic key — its statement path, loop iteration and
invocation — recorded in the journal when it completes; a resumed or replayed run
re-executes the script and takes each recorded step's value instead of running it
again, so no completed call is ever done twice and a replay is exact. The compound
values (parallel, loops, pipelines) are in `flow`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from ..protocol import BindingKind
from . import flow, nested, places
from .calls import Ask, StepFailed
from .journal import Journal
from .memory import persist_of
from .narrate import Event, args_text
from .program import (
    BreakSignal,
    ContinueSignal,
    Frame,
    Function,
    Program,
    ProseError,
    ReturnSignal,
    Scope,
    anonymous_positions,
    literal,
    replace_path,
    to_json,
    truthy,
)
from .record import NULL_RECORDER, StepRecorder

__all__ = ["Function", "Interpreter", "Program", "ProseError"]

_INTERP = re.compile(r"(?<!\\)\{([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*)\}")
# the one-argument builtins a script may apply to a value
_BUILTINS: dict[str, Callable[[Any], Any]] = {
    "len": lambda x: len(flow.items_of(x)),
    "length": lambda x: len(flow.items_of(x)),
    "first": lambda x: (flow.items_of(x) or [None])[0],
    "last": lambda x: (flow.items_of(x) or [None])[-1],
}
_SIMPLE = re.compile(r"^(not\s+)?([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*)$")


@dataclass(slots=True, kw_only=True)
class Interpreter:
    program: Program
    journal: Journal
    perform: Callable[[Ask], Any]  # runs a step through its render
    emit: Callable[[Event], None]
    replay: Mapping[str, Any] | None = None  # another run's steps: take them, run nothing
    performed: list[str] = field(default_factory=list)  # keys of steps run this time
    bindings: dict[str, Any] = field(default_factory=dict)  # the entry's, when it ends
    # runs a `use`d program: (handle, program spec, args, step key) → its result
    nest: Callable[[str, Mapping[str, str], dict[str, Any], str], Any] | None = None
    record: StepRecorder = field(default_factory=lambda: NULL_RECORDER)  # seed 004 rows
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _anonymous: dict[int, int] = field(default_factory=dict)  # statement → its anon_NNN

    def __post_init__(self) -> None:
        self._anonymous = anonymous_positions(self.program.functions)

    # -- entry ------------------------------------------------------------------------

    def run(self, args: Mapping[str, Any], key: str = "main") -> Any:
        entry = self.program.functions[self.program.entry]
        frame = Frame(function=entry, path="", depth=0, emit=self.emit)
        value = self.invoke(entry, dict(args), frame, key)
        if entry.script is None:
            self.emit(
                Event(kind="call", name=entry.name, detail=args_text(dict(args)), result="result")
            )
        return value

    def invoke(self, function: Function, args: dict[str, Any], frame: Frame, key: str) -> Any:
        """A function: its script when it has one, else one call through its render."""
        if function.script is None:
            ask = Ask(
                kind="call",
                target=function.name,
                key=key,
                args=args,
                returns=tuple(name for name, _ in function.returns),
                contract=function.path or None,
            )
            if frame.path != "":
                return self.step(frame, key, ask)
            with self.record.row(key, "call", text=f"call {function.name}"):  # a lone entry
                return self.step(frame, key, ask)
        scope = Scope(frame="" if key == "main" else key)
        inner = Frame(function=function, path=key, depth=frame.depth, emit=frame.emit)
        kind = "program" if frame.path == "" else "function"  # a `use`d program's entry
        row = self.record.row(key, kind, text=f"call {function.name}")
        with row if key != "main" else nullcontext():  # the entry's statements are roots
            for name, value in args.items():
                scope.define(name, value)
                if key != "main":
                    self.record.bind(key, name, BindingKind.INPUT, value)
            try:
                self.block(function.script, scope, inner)
                value = None
            except ReturnSignal as done:
                value = done.value
        if frame.path == "":
            self.bindings = dict(scope.vars)
        return value

    # -- steps --------------------------------------------------------------------------

    def step(self, frame: Frame, key: str, ask: Ask) -> Any:
        entry = self.journal.get(key)
        if entry is not None:
            value = entry["value"]
        elif self.replay is not None:
            if key not in self.replay:
                raise ProseError(f"the replayed run has no step {key}")
            value = self.replay[key]
            self.journal.record(key, ask.kind if ask.kind != "question" else "answer", value)
        else:
            try:
                value = {"ok": self.perform(ask)}
            except StepFailed as exc:
                if exc.error in ("unbound", "spawn", "interrupted"):
                    raise ProseError({"error": exc.error, "detail": exc.detail}) from None
                value = {"failed": {"error": exc.error, "detail": exc.detail}}
            kind = "answer" if ask.kind == "question" else ask.kind
            self.journal.record(key, kind, value)
            with self._lock:
                self.performed.append(key)
        if isinstance(value, dict) and "failed" in value:
            failed = value["failed"]
            frame.emit(
                Event(
                    kind="fail", name=ask.target, detail=str(failed.get("error")), depth=frame.depth
                )
            )
            raise ProseError(failed)
        return value.get("ok") if isinstance(value, dict) else value

    def decide(self, cond: Mapping[str, Any] | None, scope: Scope, frame: Frame, key: str) -> bool:
        if cond is None:
            return True
        text = str(cond.get("text", ""))
        simple = _SIMPLE.match(text.strip())
        if simple and scope.find(simple.group(2).split(".")[0]) is not None:
            value = truthy(self.ref(simple.group(2).split("."), scope))
            return not value if simple.group(1) else value
        question = self.interpolate(text, scope)
        answer = self.step(
            frame,
            key,
            Ask(kind="question", target=frame.function.name, key=key, args={}, question=question),
        )
        return bool(answer)

    # -- statements -------------------------------------------------------------------

    def block(self, statements: tuple[Any, ...] | list[Any], scope: Scope, frame: Frame) -> Any:
        last = None
        for index, stmt in enumerate(statements):
            last = self.statement(stmt, scope, frame, f"{frame.path}/{index}")
        return last

    def statement(self, stmt: Mapping[str, Any], scope: Scope, frame: Frame, key: str) -> Any:
        """One statement, as an execution row that ends completed or failed."""
        where: dict[str, Any] = {"path": frame.function.path, "line": stmt.get("line")}
        with self.record.row(key, "statement", **where):
            return self._statement(stmt, scope, frame, key, where)

    def _bind(
        self, scope: Scope, name: str, kind: BindingKind, key: str, where: dict[str, Any]
    ) -> None:
        root = name.split(".")[0]
        holder = scope.find(root)
        if holder is not None:
            self.record.bind(scope.frame_of(root), root, kind, holder.vars[root], key=key, **where)

    def _statement(
        self,
        stmt: Mapping[str, Any],
        scope: Scope,
        frame: Frame,
        key: str,
        where: dict[str, Any],
    ) -> Any:
        t = stmt["t"]
        if t == "Let":
            value = self.value(stmt["value"], scope, frame, key, bind=", ".join(stmt["names"]))
            names = stmt["names"]
            if stmt.get("destructured"):
                for name in names:
                    scope.define(
                        name, value.get(name) if isinstance(value, dict) else None, stmt["const"]
                    )
            else:
                scope.define(names[0], value, stmt["const"])
            kind = BindingKind.CONST if stmt["const"] else BindingKind.LET
            for name in names:
                self._bind(scope, name, kind, key, where)
            self._done(stmt["value"], ", ".join(names), frame)
            return value
        if t == "Assign":
            value = self.value(
                stmt["value"], scope, frame, key, bind=places.place_name(stmt["target"])
            )
            places.store(self, stmt["target"], value, scope, frame, key)
            self._bind(scope, places.place_name(stmt["target"]), BindingKind.LET, key, where)
            self._done(stmt["value"], places.place_name(stmt["target"]), frame)
            return value
        if t == "Append":
            item = self.value(stmt["item"], scope, frame, key)
            current = self.value(stmt["target"], scope, frame, key)
            places.store(self, stmt["target"], [*flow.items_of(current), item], scope, frame, key)
            self._bind(scope, places.place_name(stmt["target"]), BindingKind.LET, key, where)
            return None
        if t == "Return":
            raise ReturnSignal(
                None if stmt["value"] is None else self.value(stmt["value"], scope, frame, key)
            )
        if t == "Throw":
            raise ProseError(
                None if stmt["value"] is None else self.value(stmt["value"], scope, frame, key)
            )
        if t == "Break":
            raise BreakSignal
        if t == "Continue":
            raise ContinueSignal
        if t == "ExprStmt":
            value = self.value(stmt["value"], scope, frame, key)
            number = self._anonymous.get(id(stmt))
            if stmt["value"].get("t") == "Invocation" and value is not None and number:
                self.record.anonymous(scope.frame_of(), key, value, number, **where)
            self._done(stmt["value"], "", frame)
            return value
        if t == "If":
            return flow.if_(self, stmt, scope, frame, key)
        if t == "Choice":
            return flow.choice(self, stmt, scope, frame, key)
        if t == "Try":
            return flow.try_(self, stmt, scope, frame, key)
        if t == "AgentDef":
            scope.agents[stmt["name"]] = {p["key"]: self._plain(p) for p in stmt["properties"]}
            return None
        if t == "BlockDef":
            scope.blocks[stmt["name"]] = stmt
            return None
        if t in ("Use", "LegacyIO"):
            if t == "Use" and stmt.get("alias"):
                scope.define(stmt["alias"], {"use": stmt["source"]["value"]})
            if t == "Use":
                source = str(stmt["source"]["value"])
                self.record.imported(str(stmt.get("alias") or source), source, self.program)
            return None
        # a compound value used as a statement (do:, parallel:, repeat, for, loop)
        return self.value(stmt, scope, frame, key, statement=True)

    def _done(self, value: Mapping[str, Any], name: str, frame: Frame) -> None:
        if (
            isinstance(value, Mapping)
            and value.get("t") == "Invocation"
            and value.get("kind") != "call"
        ):
            frame.emit(Event(kind="done", name=name, depth=frame.depth))

    def ref(self, parts: list[str] | tuple[str, ...], scope: Scope) -> Any:
        value = scope.get(parts[0])
        for part in parts[1:]:
            value = value.get(part) if isinstance(value, dict) else None
        return value

    def interpolate(self, text: str, scope: Scope) -> str:
        def sub(match: re.Match[str]) -> str:
            parts = match.group(1).split(".")
            if scope.find(parts[0]) is None:
                return match.group(0)
            value = self.ref(parts, scope)
            return value if isinstance(value, str) else to_json(value)

        return _INTERP.sub(sub, text).replace("\\{", "{").replace("\\}", "}")

    def _plain(self, prop: Mapping[str, Any]) -> Any:
        if prop.get("children"):
            return {c["key"]: self._plain(c) for c in prop["children"]}
        return literal(prop.get("value"))

    # -- values -----------------------------------------------------------------------

    def value(
        self,
        node: Any,
        scope: Scope,
        frame: Frame,
        key: str,
        *,
        statement: bool = False,
        bind: str = "",
    ) -> Any:
        if node is None:
            return None
        t = node["t"]
        if t == "StringLit":
            return self.interpolate(node["value"], scope)
        if t in ("Number", "Constant"):
            return node["value"]
        if t == "Ref":
            return self.ref(node["parts"], scope)
        if t == "ArrayExpr":
            return [
                self.value(item, scope, frame, f"{key}[{i}]")
                for i, item in enumerate(node["items"])
            ]
        if t == "ObjectExpr":
            return {
                e["key"]: self.value(e["value"], scope, frame, f"{key}.{e['key']}")
                for e in node["entries"]
            }
        if t == "Member":
            target = self.value(node["target"], scope, frame, key)
            return target.get(node["name"]) if isinstance(target, dict) else None
        if t == "Index":
            target = self.value(node["target"], scope, frame, key)
            index = self.value(node["key"], scope, frame, key)
            if (
                isinstance(target, list)
                and isinstance(index, int)
                and -len(target) <= index < len(target)
            ):
                return target[index]
            return target.get(str(index)) if isinstance(target, dict) else None
        if t == "Invocation":
            return self.invocation(node, scope, frame, key, bind)
        if t == "Apply":
            return self.apply(node, scope, frame, key)
        if t == "DoCall":
            return nested.call_block(self, node, scope, frame, key)
        if t == "DoBlock":
            try:
                return flow.body(self, node["body"], scope, frame, f"{key}.do", "do", node)
            except ReturnSignal as done:
                return done.value
        if t == "Parallel":
            return flow.parallel(self, node, scope, frame, key, statement)
        if t in ("Repeat", "For", "Loop"):
            return flow.loop(self, node, scope, frame, key)
        if t == "Pipeline":
            return flow.pipeline(self, node, scope, frame, key)
        if t == "Filter":
            items = flow.items_of(self.value(node["source"], scope, frame, key))
            kept = []
            for i, item in enumerate(items):
                inner = Scope(scope)
                inner.define("item", item)
                if self.decide(node["condition"], inner, frame, f"{key}@{i}?"):
                    kept.append(item)
            return kept
        raise ProseError(f"line {node.get('line')}: cannot evaluate {t}")

    def arguments(
        self,
        node: Mapping[str, Any],
        scope: Scope,
        frame: Frame,
        key: str,
        params: tuple[str, ...],
    ) -> dict[str, Any]:
        args: dict[str, Any] = {}
        for position, arg in enumerate(node.get("args") or []):
            name = arg["name"] or (params[position] if position < len(params) else f"arg{position}")
            args[name] = self.value(arg["value"], scope, frame, key)
        if node.get("inputs") is not None:
            extra = self.value(node["inputs"], scope, frame, key)
            if isinstance(extra, dict):
                args.update(extra)
        for prop in node.get("properties") or []:
            if prop["key"] in ("retry", "backoff", "model"):
                continue
            args[prop["key"]] = (
                self.value(prop["value"], scope, frame, key)
                if prop["value"] is not None
                else self._plain(prop)
            )
        return args

    def invocation(
        self, node: Mapping[str, Any], scope: Scope, frame: Frame, key: str, bind: str = ""
    ) -> Any:
        kind = node["kind"]
        if kind == "call":
            target = node["target"]
            function = self.program.functions.get(target)
            params = tuple(n for n, _ in function.parameters) if function else ()
            args = self.arguments(node, scope, frame, key, params)
            imported = nested.import_of(self, target, scope) if function is None else None
            if imported is not None:
                value = nested.import_step(self, frame, key, target, imported, args)
            elif function is not None and function.script is not None:
                frame.emit(
                    Event(kind="block", name=target, detail=args_text(args), depth=frame.depth)
                )
                value = self.invoke(
                    function, args, replace_path(frame, key, frame.depth + 1), f"{key}>{target}"
                )
                frame.emit(Event(kind="block-done", name=target, depth=frame.depth))
            else:
                returns = tuple(n for n, _ in function.returns) if function else ()
                ask = Ask(
                    kind="call",
                    target=target,
                    key=key,
                    args=args,
                    returns=returns,
                    contract=function.path if function else None,
                )
                value = self.step(frame, key, ask)
            frame.emit(
                Event(
                    kind="call", name=target, detail=args_text(args), result=bind, depth=frame.depth
                )
            )
            return value
        # session / resume: an agent's render, or the running function's for a bare prompt
        agent = node.get("target")
        prompt = ""
        if node.get("prompt") is not None:
            prompt = self.interpolate(node["prompt"]["value"], scope)
        context: dict[str, Any] = {}
        for prop in node.get("properties") or []:
            if prop["key"] == "prompt" and prop["value"] is not None:
                prompt = str(self.value(prop["value"], scope, frame, key))
            elif prop["key"] == "context":
                context["context"] = self.value(prop["value"], scope, frame, key)
            elif prop["value"] is not None:
                context[prop["key"]] = self.value(prop["value"], scope, frame, key)
        if agent and agent in scope.agents and not prompt:
            prompt = str(scope.agents[agent].get("prompt") or "")
        target = agent or frame.function.name
        settings = scope.agents.get(agent, {}) if agent else {}
        persist = settings.get("persist")
        model = settings.get("model")
        ask = Ask(
            kind=kind,
            target=target,
            key=key,
            args=context,
            prompt=prompt,
            contract=frame.function.path or None,
            persist=persist_of(persist),
            model=str(model) if model is not None else None,
        )
        return self.step(frame, key, ask)

    def apply(self, node: Mapping[str, Any], scope: Scope, frame: Frame, key: str) -> Any:
        name = node["function"]
        function = self.program.functions.get(name)
        if function is not None:
            call = {
                "t": "Invocation",
                "kind": "call",
                "target": name,
                "args": node["args"],
                "properties": [],
                "inputs": None,
            }
            return self.invocation(call, scope, frame, key)
        values = [self.value(arg["value"], scope, frame, key) for arg in node["args"]]
        if name in _BUILTINS and len(values) == 1:
            return _BUILTINS[name](values[0])
        if name in scope.blocks:
            return nested.call_block(self, {"block": name, "args": node["args"]}, scope, frame, key)
        raise ProseError(f"line {node.get('line')}: `{name}` is not a function of this program")
