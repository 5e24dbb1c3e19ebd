"""A legacy `.prose/runs/{id}/` (seed 000) as a VM run: which journal steps it finished.

A legacy run keeps no journal: `state.md` says where it stopped and `bindings/` holds
each value a session wrote (`{name}.md` in the root scope, `{name}__{execution id}.md`
inside a block invocation, `anon_NNN.md` for a session nothing captured). `seed_steps`
finds the VM step each binding belongs to by running the program's script without
running anything: a probe interpreter walks it, and each session or call it meets takes
its binding's value when the binding exists (that step is finished) and a placeholder
when it does not (the step is still to do). Block invocations take the legacy execution
ids in the order they start (ids grow as blocks are entered); a binding is found in the
scope it was written in. A discretion question has no binding: the probe tries each
answer and keeps the one under which more bindings are found (a `true` that led into a
block whose bindings exist), recording it; when no answer finds more, the question is
left to ask again. A `use`d program's call takes its legacy import folder's outputs
when that nested run completed.

Loop bodies: a legacy loop rewrites its bindings each iteration, so a binding inside a
loop is taken by the first iteration that asks for it (the later ones run again).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..canonical import canonical_json
from ..fsio import append_line, atomic_write_bytes, fsync_dir, safe_name
from ..legacy import LIMIT
from ..runs import RunDir
from . import nested
from .calls import Ask
from .interp import Interpreter
from .journal import JOURNAL, Journal
from .program import Frame, ProseError, Scope

__all__ = ["adopt_legacy", "legacy_inputs", "seed_steps"]

_PROBES = 256  # probe runs at most (each question can double them)
_STEPS = 20_000  # steps one probe may meet (a loop bounded by a reference, recursion)
_MISSING = object()
_INVOCATION = re.compile(r"#[A-Za-z_][\w-]*(?=/|$)")


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


class _Probe(Interpreter):
    """The interpreter with every effect answered from the legacy bindings."""

    def setup(
        self, run: Mapping[str, Any], answers: Mapping[str, Any], imports: Mapping[str, Any]
    ) -> None:
        self.values = {
            (str(b["name"]), b.get("execution_id")): b["value"] for b in run.get("bindings", [])
        }
        known = {b.get("execution_id") for b in run.get("bindings", [])}
        known |= {f.get("execution_id") for f in run.get("call_stack", [])}
        self.ids = sorted(i for i in known if isinstance(i, int))
        self.answers = dict(answers)
        self.imports = imports
        self.names: dict[str, str] = {}
        self.invocations: list[str] = []
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
        if name is not None:
            with self.guard:
                self.names[key] = name
        return super().statement(stmt, scope, frame, key)

    def value(self, node: Any, scope: Scope, frame: Frame, key: str, **kw: Any) -> Any:
        if isinstance(node, Mapping) and node.get("t") == "DoCall":
            self._enter(f"{key}#{node['block']}")
        return super().value(node, scope, frame, key, **kw)

    def _enter(self, invocation: str) -> None:
        with self.guard:
            if invocation not in self.invocations:
                self.invocations.append(invocation)

    def execution(self, key: str) -> int | None:
        """The legacy execution id of the block invocation `key` is inside (None: root)."""
        ends = [m.end() for m in _INVOCATION.finditer(key)]
        if not ends:
            return None
        for end in ends:  # the outer ones first: they were entered first
            self._enter(key[:end])
        index = self.invocations.index(key[: ends[-1]])
        return self.ids[index] if index < len(self.ids) else -1

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
        if ask.kind == "question":
            options: tuple[Any, ...] = ask.options or (False, True)
            if key not in self.answers:
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
            value = self.imports.get(str(target), _MISSING)
            if value is _MISSING:
                return None
            with self.guard:
                self.found[key] = ("call", {"ok": value})
            return value
        return super().invocation(node, scope, frame, key, bind)


def _imports(run: Mapping[str, Any]) -> dict[str, Any]:
    """Each completed legacy import's result by handle: its one output, or all by name."""
    out: dict[str, Any] = {}
    for item in run.get("imports", []):
        if item.get("status") != "complete":
            continue
        outputs = {
            str(b["name"]): b["value"]
            for b in item.get("bindings", [])
            if b.get("kind") == "output" and b.get("execution_id") is None
        }
        if outputs:
            out[str(item["handle"])] = (
                next(iter(outputs.values())) if len(outputs) == 1 else outputs
            )
    return out


def seed_steps(raw_vm: Mapping[str, Any], run: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
    """The journal lines (key, kind, value) of the steps the legacy run `run` (as
    runtime/legacy.py reads it) finished, in the order the script meets them."""
    from .program import Program

    program = Program.from_json(raw_vm)
    imports = _imports(run)
    given = legacy_inputs(run)
    entry = program.functions[program.entry]
    args = {name: given[name] for name, _ in entry.parameters if name in given}
    with tempfile.TemporaryDirectory(prefix="prosec-legacy-") as scratch:
        budget = [_PROBES]

        def probe(answers: Mapping[str, Any]) -> dict[str, tuple[str, Any]]:
            vm = _Probe(
                program=program,
                journal=Journal(Path(scratch) / "unused.jsonl", [], None),
                perform=_never,
                emit=lambda event: None,
            )
            vm.setup(run, answers, imports)
            # a placeholder the script could not use ends the probe: what was found stands
            with contextlib.suppress(ProseError, RecursionError, _Exhausted):
                vm.run(args)
            return vm.found

        def search(answers: dict[str, Any]) -> dict[str, tuple[str, Any]]:
            budget[0] -= 1
            try:
                return probe(answers)
            except _NeedAnswer as need:
                if budget[0] <= 0:
                    return search({**answers, need.key: None})
                tried = [search({**answers, need.key: o}) for o in need.options]
                counts = [sum(1 for k, _ in f.values() if k != "answer") for f in tried]
                if len(set(counts)) == 1:  # no answer finds more: ask it again
                    chosen = dict(tried[0])
                    chosen.pop(need.key, None)
                    return chosen
                return tried[counts.index(max(counts))]

        found = search({})
    return [(key, kind, value) for key, (kind, value) in found.items()]


def adopt_legacy(
    root: Path,
    raw: Mapping[str, Any],
    legacy: Path,
    run: Mapping[str, Any],
    *,
    compiled: Mapping[str, bytes],
    origin: str,
    backend: str,
) -> RunDir:
    """The legacy run folder `legacy` (read as `run`) as the current-layout VM run
    `runs/{same id}/`: compiled-intent.json with the program's `vm` section, the
    program as written and as compiled in sources/, its agents' memory and segments
    under agents/, and vm/journal.jsonl holding every step it finished, so `resume_vm`
    continues it doing none of them again. The legacy folder is left as it was."""
    given = legacy_inputs(run)
    raw_vm = raw["vm"]
    steps = seed_steps(raw_vm, run)
    info = {
        "kind": "vm",
        "wakes": [],
        "backend": backend,
        "started_ns": time.time_ns(),
        "inputs": dict(sorted(given.items())),
        "legacy": origin,
        "legacy_run": legacy.relative_to(root).as_posix()
        if legacy.is_relative_to(root)
        else legacy.name,
    }
    sources = [str(s["path"]) for s in raw.get("sources", [])]
    sources += sorted(set(compiled) - set(sources))
    final = root / "runs" / legacy.name
    if final.exists():
        raise FileExistsError(f"run {legacy.name} exists in {root / 'runs'}")
    # made whole under runs/.adopting/ and renamed into place: a crash leaves no run
    # with half its journal (the next adoption clears the leftover)
    staging = root / "runs" / ".adopting"
    shutil.rmtree(staging / legacy.name, ignore_errors=True)
    made = RunDir.create(
        root,
        legacy.name,
        runs_dir=staging,
        intent_bytes=canonical_json(dict(raw)) + b"\n",
        sources=sources,
        root_source=str(raw_vm.get("target") or "") or None,
        title=str(raw_vm["entry"]),
        upstream=[],
        info=info,
        compiled=compiled,
    )
    agents = legacy / "agents"
    if agents.is_dir():
        for folder in sorted(p for p in agents.iterdir() if p.is_dir()):
            for item in sorted(folder.glob("*.md")):
                if item.is_symlink() or not item.is_file() or item.stat().st_size > LIMIT:
                    continue  # untrusted: a link out of the run, or a huge file, is left
                target = made.path / "agents" / safe_name(folder.name) / item.name
                atomic_write_bytes(target, item.read_bytes())
    journal = Journal.open(made.path / JOURNAL)
    for key, kind, value in steps:
        journal.record(key, kind, value)
    if run.get("status") == "complete":  # finished: its result, bindings and end marker
        root_scope = {
            str(b["name"]): b["value"]
            for b in run.get("bindings", [])
            if b.get("execution_id") is None
        }
        outputs = [str(b["name"]) for b in run.get("bindings", []) if b.get("kind") == "output"]
        result: Any = None
        if len(outputs) == 1:
            result = root_scope.get(outputs[0])
        elif outputs:
            result = {name: root_scope.get(name) for name in outputs}
        vm = made.path / "vm"
        atomic_write_bytes(vm / "result.json", canonical_json({"result": result}) + b"\n")
        atomic_write_bytes(vm / "bindings.json", canonical_json(root_scope) + b"\n")
        ended = str(run.get("updated") or "").strip() or "unknown"
        append_line(made.path / "vm.log.md", f"---end {ended}".encode())
    os.rename(made.path, final)
    fsync_dir(final.parent)
    with contextlib.suppress(OSError):
        staging.rmdir()
    return RunDir(final)


def _never(ask: Ask) -> Any:
    raise AssertionError(f"the legacy probe performs nothing ({ask.key})")
