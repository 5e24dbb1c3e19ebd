"""A legacy `.prose/runs/{id}/` (seed 000) as a VM run: which journal steps it finished.

A legacy run keeps no journal: `state.md` says where it stopped and `bindings/` holds
each value a session wrote (`{name}.md` in the root scope, `{name}__{execution id}.md`
inside a block invocation, `anon_NNN.md` for a session nothing captured). `seed_steps`
finds the VM step each binding belongs to by running the program's script without
running anything: a probe interpreter walks it, and each session or call it meets takes
its binding's value when the binding exists (that step is finished) and a placeholder
when it does not (the step is still to do). Each block invocation takes the legacy
execution id `state.md` and `bindings/` record for it (runtime/vm/legacy_trace.py: the
call stack, the trace, the parameter bindings), so a binding is found in the scope it
was written in whatever order the invocations started; the probe walks parallel
branches and `parallel for` iterations one after the other, in order, so what it finds
(`anon_NNN` numbering, ids) never depends on threads. A
discretion question has no binding: the probe tries each answer and keeps the one under
which more bindings are found (a `true` that led into a block whose bindings exist),
recording it; when no answer finds more, the question is left to ask again. A `use`d
program's call takes its legacy import folder's outputs when that nested run
completed; a nested run that did not is seeded the same way from its own `state.md`
and `bindings/` (`Seed.nested`), and continues as the resumed run's nested run.

Loops: a legacy loop rewrites its bindings each iteration, and `state.md`'s active
construct says how far it got (`iteration: 2/3`, `status: executing`). The loop is
found by its header line; each iteration before the current one is finished: its
steps take the bindings' (latest) values and its condition the answer that kept the
loop going (a finished loop's last one, the answer that ended it). In the current
iteration a statement the trace marks done (`# --> bindings/x.md`, `(complete)`) takes
its binding, which that statement has just written; the rest of it runs.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import nested
from .calls import Ask
from .interp import Interpreter
from .journal import Journal
from .legacy_trace import (
    MISSING,
    ExecutionIds,
    TraceStatus,
    block_names,
    import_results,
    loop_progress,
    match_import,
)
from .program import Frame, Program, ProseError, Scope

__all__ = ["Seed", "legacy_inputs", "seed_run", "seed_steps"]

_PROBES = 256  # probe runs at most (each question can double them)
_STEPS = 20_000  # steps one probe may meet (a loop bounded by a reference, recursion)
_MISSING = MISSING  # a binding or import result not found
_INVOCATION = re.compile(r"#[A-Za-z_][\w-]*(?=/|$)")
_BRANCH = re.compile(r"(?P<parallel>.+)\|(?P<index>\d+)")
_ITERATION = re.compile(r"(?P<loop>.+)@(?P<index>\d+)")
_TURN = 30.0  # seconds a branch waits for the one before it, at most


class _NeedAnswer(Exception):
    def __init__(self, key: str, options: tuple[Any, ...]) -> None:
        super().__init__(key)
        self.key = key
        self.options = options


class _Exhausted(Exception):
    pass


def legacy_inputs(run: Mapping[str, Any]) -> dict[str, str]:
    """The caller inputs of a legacy run: its root-scope `kind: input` bindings."""
    return {
        str(b["name"]): str(b["value"])
        for b in run.get("bindings", [])
        if b.get("kind") == "input" and b.get("execution_id") is None
    }


@dataclass(frozen=True, slots=True)
class _Facts:
    """What the probes of one legacy run share, read once (not once per probe)."""

    lines: list[str]
    progress: dict[str, tuple[int, bool]]
    trace: TraceStatus
    values: dict[tuple[str, Any], Any]
    blocks: dict[str, tuple[tuple[str, ...], frozenset[str]]]
    ids: ExecutionIds
    available: int
    imports: list[tuple[Mapping[str, Any], Any]]

    @classmethod
    def read(cls, program: Program, run: Mapping[str, Any], lines: list[str]) -> _Facts:
        blocks = block_names([f.script for f in program.functions.values()])
        return cls(
            lines=lines,
            progress=loop_progress(run),
            trace=TraceStatus(run, lines),
            values={
                (str(b["name"]), b.get("execution_id")): b["value"] for b in run.get("bindings", [])
            },
            blocks=blocks,
            ids=ExecutionIds(run, blocks),
            available=sum(1 for b in run.get("bindings", []) if b.get("kind") != "input"),
            imports=import_results(run),
        )


class _Probe(Interpreter):
    """The interpreter with every effect answered from the legacy bindings."""

    def setup(self, facts: _Facts, answers: Mapping[str, Any]) -> None:
        self.lines = facts.lines  # the compiled source's lines (loops: by their header)
        self.progress = facts.progress
        self.trace = facts.trace
        self.lines_of: dict[str, Any] = {}  # statement key -> its compiled line
        self.turns: dict[str, int] = {}  # parallel key -> the branch whose turn it is
        self.turn = threading.Condition()
        self.loops: dict[str, tuple[int, bool, str]] = {}  # key -> (started, ended, kind)
        self.values = facts.values
        self.blocks = facts.blocks
        self.ids = facts.ids.fresh()
        self.claimed: set[int] = set()  # the legacy imports a call took
        # the bindings a step could take: once all are taken, no answer can find more
        self.available = facts.available
        self.answers = dict(answers)
        self.imports = facts.imports
        self.names: dict[str, str] = {}
        self.found: dict[str, tuple[str, Any]] = {}
        self.taken: set[tuple[str, int | None]] = set()
        self.anon = 0
        self.count = 0
        self.guard = threading.Lock()

    # the statement that asks each step, and its binding's name
    def statement(self, stmt: Mapping[str, Any], scope: Scope, frame: Frame, key: str) -> Any:
        name = None
        if stmt["t"] == "Let" and not stmt.get("destructured"):
            name = str(stmt["names"][0])
        elif stmt["t"] == "Assign" and stmt["target"]["t"] == "Ref":
            name = str(stmt["target"]["parts"][0])
        elif stmt["t"] == "ExprStmt":
            value = stmt["value"]
            if isinstance(value, Mapping) and value.get("t") == "Invocation":
                with self.guard:
                    self.anon += 1
                    name = f"anon_{self.anon:03d}"
        with self.guard:
            self.lines_of[key] = stmt.get("line")
            if name is not None:
                self.names[key] = name
        branch = _BRANCH.fullmatch(key)
        if branch is None:
            return super().statement(stmt, scope, frame, key)
        with self._in_turn(branch["parallel"], int(branch["index"])):  # a parallel branch
            return super().statement(stmt, scope, frame, key)

    def block(self, statements: tuple[Any, ...] | list[Any], scope: Scope, frame: Frame) -> Any:
        iteration = _ITERATION.fullmatch(frame.path)
        if iteration is None:
            return super().block(statements, scope, frame)
        with self._in_turn(iteration["loop"], int(iteration["index"])):  # `parallel for` too
            return super().block(statements, scope, frame)

    @contextlib.contextmanager
    def _in_turn(self, group: str, index: int) -> Iterator[None]:
        """Branch or iteration `index` of `group` after the one before it: the probe
        meets steps (anon_NNN, execution ids) in the script's order, whatever the
        threads do (a wait that could not end, never expected, gives up after _TURN s)."""
        with self.turn:
            self.turn.wait_for(lambda: self.turns.get(group, 0) >= index, timeout=_TURN)
        try:
            yield
        finally:
            with self.turn:
                self.turns[group] = max(self.turns.get(group, 0), index + 1)
                self.turn.notify_all()

    def value(self, node: Any, scope: Scope, frame: Frame, key: str, **kw: Any) -> Any:
        if isinstance(node, Mapping) and node.get("t") == "DoCall":
            self._enter(node, scope, key)
        if isinstance(node, Mapping) and node.get("t") in ("Loop", "Repeat", "For"):
            line = node.get("line")
            header = ""
            if isinstance(line, int) and 0 < line <= len(self.lines):
                header = self.lines[line - 1].strip()
            if header in self.progress:
                started, ended = self.progress[header]
                with self.guard:
                    self.loops[key] = (started, ended, str(node.get("kind") or ""))
        return super().value(node, scope, frame, key, **kw)

    def _iteration(self, key: str) -> tuple[str, int, tuple[int, bool, str], bool] | None:
        """(loop key, iteration, progress, finished) when `key` is inside an iteration of
        a loop `state.md` gives the progress of (the innermost such loop)."""
        best = None
        for loop, progress in self.loops.items():
            found = re.match(re.escape(loop) + r"@(\d+)(?=[/?#.|@>\[]|$)", key)
            if found and (best is None or len(loop) > len(best[0])):
                best = (loop, int(found[1]), progress)
        if best is None:
            return None
        started, ended, _ = best[2]
        finished = best[1] < started - 1 or (ended and best[1] < started)
        return (*best, finished)

    def _enter(self, node: Mapping[str, Any], scope: Scope, key: str) -> None:
        """A block invocation starts: the legacy execution id that agrees with it."""
        block = str(node["block"])
        params = self.blocks.get(block, ((), frozenset()))[0]
        args: dict[str, str] = {}
        for position, arg in enumerate(node.get("args") or []):
            name = arg.get("name") or (params[position] if position < len(params) else None)
            text = _text(arg.get("value"), scope)
            if name is not None and text is not None:
                args[str(name)] = text
        depth = len(_INVOCATION.findall(key)) + 1
        self.ids.assign(
            f"{key}#{block}",
            block,
            depth=depth,
            parent=self.execution(key),
            finished=self._finished(key) if depth == 1 else None,
            args=args,
        )

    def _finished(self, key: str) -> bool | None:
        """Whether the statement `key` finished, as far as the trace tells: its line's
        annotation speaks of a loop's current iteration only (an earlier one finished,
        a later one has not started), and of no iteration of a loop `state.md` gives no
        progress of."""
        inside = self._iteration(key)
        if inside is None and "@" in key:
            return None
        if inside is not None:
            _, index, (started, ended, _), finished = inside
            if finished:
                return True
            if ended or index != started - 1:
                return None
        with self.guard:
            line = self.lines_of.get(key)
        return self.trace.done(line)

    def execution(self, key: str) -> int | None:
        """The legacy execution id of the block invocation `key` is inside (None: root;
        -1: an invocation no recorded id agrees with)."""
        ends = [m.end() for m in _INVOCATION.finditer(key)]
        if not ends:
            return None
        with self.ids.guard:
            return self.ids.given.get(key[: ends[-1]], -1)

    def _take(self, name: str, execution: int | None) -> Any:
        with self.guard:
            found = (name, execution)
            if found in self.taken or found not in self.values:
                return _MISSING
            self.taken.add(found)
            return self.values[found]

    def _spend(self) -> None:
        with self.guard:
            self.count += 1
            if self.count > _STEPS:
                raise _Exhausted

    def step(self, frame: Frame, key: str, ask: Ask) -> Any:
        self._spend()
        inside = self._iteration(key)
        if inside is not None and inside[3]:
            return self._replayed(key, ask, inside[:3])
        if inside is not None and ask.kind != "question" and self._current(key, inside):
            # the current iteration: a statement the trace marks done took its binding
            name = self.names.get(key)
            execution = self.execution(key)
            if name is not None and (name, execution) in self.values:
                value = self.values[(name, execution)]
                with self.guard:
                    self.taken.add((name, execution))
                    self.found[key] = (ask.kind, {"ok": value})
                return value
        if inside is not None:  # the current iteration or a later one: all still to do
            return (ask.options or (False,))[0] if ask.kind == "question" else None
        if ask.kind == "question":
            options: tuple[Any, ...] = ask.options or (False, True)
            if key not in self.answers:
                with self.guard:
                    exhausted = len(self.taken) >= self.available
                if exhausted:  # nothing left to find: asked again, no search
                    return options[0]
                raise _NeedAnswer(key, options)
            answer = self.answers[key]
            if answer is None:  # left to ask again: the probe goes on as if the first
                return options[0]
            with self.guard:
                self.found[key] = ("answer", {"ok": answer})
            return answer
        name = self.names.get(key)
        value = _MISSING if name is None else self._take(name, self.execution(key))
        if value is _MISSING:
            return None  # still to do: a placeholder, nothing recorded
        with self.guard:
            self.found[key] = (ask.kind, {"ok": value})
        return value

    def _current(self, key: str, inside: tuple[str, int, tuple[int, bool, str], bool]) -> bool:
        """Whether the step is in the loop's current iteration and the trace marks its
        statement done (the step's key is its statement's)."""
        _, index, (started, ended, _), _ = inside
        if ended or index != started - 1:
            return False
        with self.guard:
            line = self.lines_of.get(key)
        return self.trace.done(line) is True

    def _replayed(self, key: str, ask: Ask, inside: tuple[str, int, tuple[int, bool, str]]) -> Any:
        """A step of a loop iteration the legacy run finished."""
        loop, index, (started, ended, kind) = inside
        if ask.kind == "question":
            if key != f"{loop}@{index}?" or kind not in ("until", "while"):
                if key not in self.answers:  # another question inside: as anywhere else
                    raise _NeedAnswer(key, ask.options or (False, True))
                return self.answers[key] if self.answers[key] is not None else False
            stop = ended and index == started - 1
            answer = stop if kind == "until" else not stop
            with self.guard:
                self.found[key] = ("answer", {"ok": answer})
            return answer
        name = self.names.get(key)
        execution = self.execution(key)
        if name is None or (name, execution) not in self.values:
            return None
        value = self.values[(name, execution)]  # the latest iteration's value
        with self.guard:
            self.taken.add((name, execution))
            self.found[key] = (ask.kind, {"ok": value})
        return value

    def invocation(
        self, node: Mapping[str, Any], scope: Scope, frame: Frame, key: str, bind: str = ""
    ) -> Any:
        target = node.get("target")
        if (
            node["kind"] == "call"
            and target
            and target not in self.program.functions
            and nested.import_of(self, str(target), scope) is not None
        ):
            self._spend()
            spec = nested.import_of(self, str(target), scope)
            holder = scope.find(str(target))
            use = str(holder.vars[str(target)]["use"]) if holder is not None else ""
            value: Any = _MISSING
            with self.guard:
                index = match_import(self.imports, self.claimed, str(target), use)
                if index is not None:
                    self.claimed.add(index)
                    value = self.imports[index][1]
                    if value is _MISSING and spec is not None:  # left half done: seeded
                        found = {"handle": str(target), "spec": dict(spec), "item": index}
                        self.found[key] = ("nested", found)
            if value is _MISSING:
                return None
            with self.guard:
                self.found[key] = ("call", {"ok": value})
            return value
        return super().invocation(node, scope, frame, key, bind)


def _text(node: Any, scope: Scope) -> str | None:
    """An argument's value as text, when it is a plain string or a name bound to one."""
    if not isinstance(node, Mapping):
        return None
    if node.get("t") == "StringLit" and not node.get("interpolations"):
        return str(node.get("value", "")).strip()
    if node.get("t") == "Ref" and len(node.get("parts") or []) == 1:
        name = str(node["parts"][0])
        holder = scope.find(name)
        found = holder.vars.get(name) if holder is not None else None
        return found.strip() if isinstance(found, str) else None
    return None


@dataclass(frozen=True, slots=True)
class Seed:
    """What a legacy run finished: its journal lines (key, kind, value), in the order the
    script meets them, and each nested run it left half done as (the calling step's
    key, the `use` alias, the import spec, that run's own Seed)."""

    steps: list[tuple[str, str, Any]]
    nested: list[tuple[str, str, Mapping[str, str], Seed]] = field(default_factory=list)


def seed_steps(
    raw_vm: Mapping[str, Any], run: Mapping[str, Any], source: str = ""
) -> list[tuple[str, str, Any]]:
    """The journal lines (key, kind, value) of the steps the legacy run `run` (as
    runtime/legacy.py reads it) finished, in the order the script meets them. `source`
    is the entry's compiled text (its loops are matched to `state.md`'s by header)."""
    return seed_run(raw_vm, run, source).steps


def seed_run(
    raw_vm: Mapping[str, Any],
    run: Mapping[str, Any],
    source: str = "",
    read: Callable[[str], str] | None = None,
) -> Seed:
    """The Seed of the legacy run `run`: `source` is the entry's compiled text, `read`
    gives a nested program's compiled text by its path (its loops and trace lines)."""
    program = Program.from_json(raw_vm)
    given = legacy_inputs(run)
    entry = program.functions[program.entry]
    args = {name: given[name] for name, _ in entry.parameters if name in given}
    return _seed(program, run, source, args, "main", read or (lambda path: ""), 0)


def _seed(
    program: Program,
    run: Mapping[str, Any],
    source: str,
    args: Mapping[str, Any],
    start: str,
    read: Callable[[str], str],
    depth: int,
) -> Seed:
    facts = _Facts.read(program, run, source.split("\n") if source else [])
    with tempfile.TemporaryDirectory(prefix="prosec-legacy-") as scratch:
        budget = [_PROBES]

        def probe(answers: Mapping[str, Any]) -> dict[str, tuple[str, Any]]:
            vm = _Probe(
                program=program,
                journal=Journal(Path(scratch) / "unused.jsonl", [], None),
                perform=_never,
                emit=lambda event: None,
            )
            vm.setup(facts, answers)
            # a placeholder the script could not use ends the probe: what was found stands
            with contextlib.suppress(ProseError, RecursionError, _Exhausted):
                vm.run(args, key=start)
            return vm.found

        def search(answers: dict[str, Any]) -> dict[str, tuple[str, Any]]:
            budget[0] -= 1
            try:
                return probe(answers)
            except _NeedAnswer as need:
                if budget[0] <= 0:
                    return search({**answers, need.key: None})
                tried = [search({**answers, need.key: o}) for o in need.options]
                counts = [
                    sum(1 for k, _ in f.values() if k not in ("answer", "nested")) for f in tried
                ]
                if len(set(counts)) == 1:  # no answer finds more: ask it again
                    chosen = dict(tried[0])
                    chosen.pop(need.key, None)
                    return chosen
                return tried[counts.index(max(counts))]

        found = search({})
    seed = Seed([(key, kind, value) for key, (kind, value) in found.items() if kind != "nested"])
    for key, (kind, value) in found.items():
        if kind != "nested" or depth >= 16:
            continue
        item = run["imports"][value["item"]]
        inner = program.nested(value["spec"])
        if inner.entry not in inner.functions:
            continue
        given = legacy_inputs(item)
        params = inner.functions[inner.entry].parameters
        inner_args = {name: given[name] for name, _ in params if name in given}
        text = read(inner.target)
        below = _seed(inner, item, text, inner_args, f"{key}>main", read, depth + 1)
        seed.nested.append((key, value["handle"], value["spec"], below))
    return seed


def _never(ask: Ask) -> Any:
    raise AssertionError(f"the legacy probe performs nothing ({ask.key})")
