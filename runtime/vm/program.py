"""The VM's plain program model: functions, scopes, frames and control-flow signals."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .narrate import Event

__all__ = [
    "BreakSignal",
    "ContinueSignal",
    "Frame",
    "Function",
    "Program",
    "ProseError",
    "ReturnSignal",
    "Scope",
    "branch_name",
    "cond_text",
    "literal",
    "replace_path",
    "to_json",
    "truthy",
]


class ProseError(Exception):
    """A ProseScript error value in flight (`throw`, or a step that failed)."""

    def __init__(self, value: Any) -> None:
        super().__init__(str(value))
        self.value = value


class ReturnSignal(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


class BreakSignal(Exception):
    pass


class ContinueSignal(Exception):
    pass


@dataclass(frozen=True, slots=True, kw_only=True)
class Function:
    name: str
    kind: str
    path: str
    parameters: tuple[tuple[str, str], ...]
    returns: tuple[tuple[str, str], ...]
    script: tuple[Any, ...] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Program:
    entry: str
    target: str
    functions: Mapping[str, Function]
    imports: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # use text → program

    def nested(self, spec: Mapping[str, str]) -> Program:
        """The imported program `spec` names, over the same functions."""
        return Program(
            entry=spec["entry"],
            target=spec["target"],
            functions=self.functions,
            imports=self.imports,
        )

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Program:
        functions = {}
        for name, item in raw.get("functions", {}).items():
            script = item.get("script")
            functions[name] = Function(
                name=name,
                kind=str(item.get("kind", "function")),
                path=str(item.get("path", "")),
                parameters=tuple(
                    (p["name"], p.get("description", "")) for p in item.get("parameters", [])
                ),
                returns=tuple(
                    (p["name"], p.get("description", "")) for p in item.get("returns", [])
                ),
                script=tuple(script) if script is not None else None,
            )
        imports = {
            str(text): {"entry": str(item["entry"]), "target": str(item["target"])}
            for text, item in dict(raw.get("imports", {})).items()
        }
        return cls(
            entry=str(raw["entry"]),
            target=str(raw.get("target", "")),
            functions=functions,
            imports=imports,
        )


class Scope:
    """Bindings of one block, chained to the enclosing ones."""

    def __init__(self, parent: Scope | None = None, frame: str | None = None) -> None:
        self.parent = parent
        # the key of the recorded frame row this scope belongs to ("" the root scope),
        # None for a scope inside its enclosing one's frame (a branch, a try body)
        self.frame = frame
        self.vars: dict[str, Any] = {}
        self.consts: set[str] = set()
        self.blocks: dict[str, Mapping[str, Any]] = {} if parent is None else parent.blocks
        self.agents: dict[str, Any] = {} if parent is None else parent.agents

    def find(self, name: str) -> Scope | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.vars:
                return scope
            scope = scope.parent
        return None

    def get(self, name: str) -> Any:
        scope = self.find(name)
        if scope is None:
            raise ProseError(f"`{name}` is not bound")
        return scope.vars[name]

    def define(self, name: str, value: Any, const: bool = False) -> None:
        self.vars[name] = value
        if const:
            self.consts.add(name)

    def frame_of(self, name: str | None = None) -> str:
        """The frame key of the scope holding `name` (of this scope when None)."""
        scope: Scope | None = (self.find(name) if name is not None else None) or self
        while scope is not None and scope.frame is None:
            scope = scope.parent
        return scope.frame if scope is not None and scope.frame is not None else ""

    def assign(self, name: str, value: Any) -> None:
        scope = self.find(name) or self
        if name in scope.consts:
            raise ProseError(f"`{name}` is a const")
        scope.vars[name] = value


@dataclass(slots=True)
class Frame:
    """Where the interpreter is: the function running, its step path, narration depth."""

    function: Function
    path: str
    depth: int
    emit: Callable[[Event], None]


def truthy(value: Any) -> bool:
    return value not in (None, False, 0, "", [], {})


def replace_path(frame: Frame, path: str, depth: int | None = None) -> Frame:
    return Frame(
        function=frame.function,
        path=path,
        depth=frame.depth if depth is None else depth,
        emit=frame.emit,
    )


def branch_name(stmt: Mapping[str, Any], index: int) -> str:
    if stmt["t"] == "Let":
        return ",".join(stmt["names"])
    if stmt["t"] == "Assign" and stmt["target"]["t"] == "Ref":
        return ".".join(stmt["target"]["parts"])
    value = stmt.get("value") if stmt["t"] == "ExprStmt" else None
    if isinstance(value, Mapping) and value.get("t") == "Invocation" and value.get("target"):
        return str(value["target"])
    return str(index + 1)


def cond_text(cond: Mapping[str, Any] | None) -> str:
    return str(cond.get("text", "")) if cond else ""


def literal(node: Any) -> Any:
    if not isinstance(node, Mapping):
        return node
    if node.get("t") == "StringLit":
        return node["value"]
    if node.get("t") in ("Number", "Constant"):
        return node["value"]
    if node.get("t") == "ArrayExpr":
        return [literal(i) for i in node["items"]]
    if node.get("t") == "Ref":
        return ".".join(node["parts"])
    return None


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def message_of(value: Any) -> str:
    """An error value as an execution row's error_message: `name: detail` or its text."""
    if isinstance(value, dict) and "error" in value:
        return f"{value['error']}: {value.get('detail', '')}".strip().rstrip(":")
    return value if isinstance(value, str) else to_json(value)


def anonymous_positions(functions: Mapping[str, Function]) -> dict[int, int]:
    """Seed 004's `anon_NNN` numbers by program position: every statement that is a
    bare invocation (a session or call whose value nothing captures), numbered 1, 2, …
    in the order the program's functions and their scripts are written (nested bodies
    in place). Keyed by the statement node's identity, so the number depends only on
    where the statement is in the program, never on when it ran: parallel branches,
    backends and resumed runs agree. A statement run again in another frame (a loop
    iteration, a block or function invocation) has the same name there: the bindings
    key is (name, run, execution scope)."""
    numbers: dict[int, int] = {}
    for function in functions.values():
        for node in script_nodes(function.script):
            value = node.get("value")
            invocation = isinstance(value, Mapping) and value.get("t") == "Invocation"
            if node.get("t") == "ExprStmt" and invocation:
                numbers[id(node)] = len(numbers) + 1
    return numbers


__all__ += ["anonymous_positions", "script_nodes"]


def script_nodes(node: Any) -> Iterator[Mapping[str, Any]]:
    """Every object of a lowered script (its JSON form), in pre-order: each node before
    what it holds, in the order they are written."""
    if isinstance(node, Mapping):
        yield node
        for value in node.values():
            yield from script_nodes(value)
    elif isinstance(node, list | tuple):
        for item in node:
            yield from script_nodes(item)
