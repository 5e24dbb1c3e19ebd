"""What a legacy run's `state.md` (seed 000) says about the VM steps of a resumed run:
the trace status of each statement line, the legacy execution id of each block
invocation, each loop's progress and each import folder's result (for
runtime/vm/legacy_seed.py).

Trace: `state.md`'s execution trace is the program's code with annotations (`# -->
bindings/x.md`, `# (complete)`, `# <-- EXECUTING`, …). A compiled statement is matched
to its trace line by its code (the `let` the Contract Markdown form adds to an `output`
or a parallel branch ignored; the n-th of equal lines to the n-th).

Execution ids: seed 000 scopes a binding made inside a block invocation as
`{name}__{execution id}.md`, and records, per id, the call stack row of an invocation
still running (block, depth, status; the rows form the active chain), the bindings it
wrote (their names, and its parameters as `kind: input` bindings with their values).
Each invocation the probe enters is given the id whose record agrees with it: the
block (named by the call stack, or the block whose body binds every name the id
wrote), the depth and caller (the call stack's chain), whether it was still running
(a call stack row) or finished (its call line `(complete)` in the trace), and the
arguments (its parameter bindings). Among the ids that agree, the one that agrees on
most wins, then the smallest (ids grow as invocations start). None agreeing: no id
(its steps are still to do).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .program import script_nodes

__all__ = [
    "MISSING",
    "ExecutionIds",
    "TraceStatus",
    "block_names",
    "import_results",
    "loop_progress",
    "match_import",
]

MISSING = object()  # a legacy import with no result (it did not complete)

_LEAD = re.compile(r"^(?:let|output)\s+")
_UNKNOWN = object()
IDS = 4096  # execution ids considered at most, the smallest (untrusted input: bounded work)


def _normal(code: str) -> str:
    return " ".join(_LEAD.sub("", code.strip()).split())


class TraceStatus:
    """The trace status (`complete`, `written`, `executing`, …) of compiled lines."""

    def __init__(self, run: Mapping[str, Any], lines: list[str]) -> None:
        self.lines = lines
        self.trace: dict[str, list[dict[str, Any]]] = {}
        for entry in run.get("trace", []):
            self.trace.setdefault(_normal(str(entry.get("code", ""))), []).append(entry)
        self.occurrence: dict[int, int] = {}  # compiled line -> its index among equal lines
        seen: dict[str, int] = {}
        for number, line in enumerate(lines, start=1):
            text = _normal(line)
            if text:
                self.occurrence[number] = seen.get(text, 0)
                seen[text] = seen.get(text, 0) + 1

    def of(self, line: Any) -> str | None:
        if not isinstance(line, int) or not 0 < line <= len(self.lines):
            return None
        entries = self.trace.get(_normal(self.lines[line - 1]), [])
        index = self.occurrence.get(line, 0)
        if not entries:
            return None
        entry = entries[index] if index < len(entries) else entries[-1]
        status = entry.get("status")
        return str(status) if status else None

    def done(self, line: Any) -> bool | None:
        """True: the trace marks the line's statement done; False: still running; None:
        the trace does not say."""
        status = self.of(line)
        if status in ("complete", "written"):
            return True
        if status in ("executing", "retrying"):
            return False
        return None


def block_names(scripts: Any) -> dict[str, tuple[tuple[str, ...], frozenset[str]]]:
    """Each block definition of `scripts` by name: (its parameters, every name its body
    binds, the parameters included)."""
    out: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {}
    for node in script_nodes(scripts):
        if node.get("t") != "BlockDef":
            continue
        names = set(node.get("params") or [])
        for inner in script_nodes(node.get("body") or []):
            if inner.get("t") == "Let":
                names |= set(inner.get("names") or [])
            elif inner.get("t") == "Assign" and inner.get("target", {}).get("t") == "Ref":
                names.add(str(inner["target"]["parts"][0]))
        out[str(node["name"])] = (tuple(node.get("params") or []), frozenset(names))
    return out


@dataclass(slots=True)
class _Record:
    block: str | None = None
    depth: int | None = None
    parent: Any = _UNKNOWN  # the caller's id (None: the root), as the call stack says
    running: bool = False
    names: set[str] = field(default_factory=set)
    params: dict[str, str] = field(default_factory=dict)


class ExecutionIds:
    """The legacy execution id of each block invocation (see the module doc)."""

    def __init__(
        self,
        run: Mapping[str, Any],
        blocks: Mapping[str, tuple[tuple[str, ...], frozenset[str]]],
    ) -> None:
        self.blocks = blocks
        self.records: dict[int, _Record] = {}
        for row in run.get("index", {}).get("bindings", []):
            if isinstance(row.get("execution_id"), int):
                self.records.setdefault(row["execution_id"], _Record())
        for binding in run.get("bindings", []):
            found = binding.get("execution_id")
            if not isinstance(found, int):
                continue
            record = self.records.setdefault(found, _Record())
            record.names.add(str(binding["name"]))
            if binding.get("kind") == "input":
                record.params[str(binding["name"])] = str(binding.get("value", "")).strip()
        stack = [r for r in run.get("call_stack", []) if isinstance(r.get("execution_id"), int)]
        depths = [r.get("depth") for r in stack]
        chain = len(set(depths)) == len(depths) and all(isinstance(d, int) for d in depths)
        by_depth = {r["depth"]: r["execution_id"] for r in stack} if chain else {}
        for row in stack:
            record = self.records.setdefault(row["execution_id"], _Record())
            record.block = str(row.get("block") or "") or None
            record.depth = row.get("depth") if isinstance(row.get("depth"), int) else None
            record.running = True
            if chain and record.depth is not None:
                record.parent = None if record.depth == 1 else by_depth.get(record.depth - 1)
        if len(self.records) > IDS:
            self.records = {n: self.records[n] for n in sorted(self.records)[:IDS]}
        self.given: dict[str, int] = {}  # invocation key -> id (-1: none)
        self.guard = threading.Lock()

    def fresh(self) -> ExecutionIds:
        """The same records with no id given yet (one per probe; the records are read
        once and never changed)."""
        copy = object.__new__(ExecutionIds)
        copy.blocks, copy.records = self.blocks, self.records
        copy.given, copy.guard = {}, threading.Lock()
        return copy

    def assign(
        self,
        invocation: str,
        block: str,
        *,
        depth: int,
        parent: int | None,
        finished: bool | None,
        args: Mapping[str, str],
    ) -> int:
        """The id of the invocation `invocation` (its key) of `block`, at `depth` (1: from
        the root), called from the invocation with id `parent` (None: the root; -1: one
        without an id), `finished` as its call line's trace says, with `args` by
        parameter (the ones known as text). -1 when no id agrees."""
        with self.guard:
            if invocation in self.given:
                return self.given[invocation]
            taken = set(self.given.values())
            best: tuple[int, int] | None = None
            for number in sorted(self.records):
                if number in taken:
                    continue
                score = self._score(self.records[number], block, depth, parent, finished, args)
                if score is not None and (best is None or score > best[0]):
                    best = (score, number)
            chosen = best[1] if best is not None else -1
            self.given[invocation] = chosen
            return chosen

    def _score(
        self,
        record: _Record,
        block: str,
        depth: int,
        parent: int | None,
        finished: bool | None,
        args: Mapping[str, str],
    ) -> int | None:
        score = 0
        if record.block is not None:
            if record.block != block:
                return None
            score += 1
        elif record.names and block in self.blocks:
            if not record.names <= self.blocks[block][1]:
                return None
            score += 1
        if record.depth is not None:
            if record.depth != depth:
                return None
            score += 1
        if record.parent is not _UNKNOWN and parent != -1:
            if record.parent != parent:
                return None
            score += 1
        if finished is True and record.running:
            return None  # a finished invocation is on no call stack
        if finished is not None and finished != record.running:
            score += 1
        for name, value in record.params.items():
            if name in args:
                if args[name] != value:
                    return None
                score += 2
        return score


def loop_progress(run: Mapping[str, Any]) -> dict[str, tuple[int, bool]]:
    """Each active loop construct of `state.md` by its header line's code: (iterations
    started, whether it ended)."""
    code = {e["line"]: str(e.get("code", "")).strip() for e in run.get("trace", [])}
    out: dict[str, tuple[int, bool]] = {}
    for construct in run.get("constructs", []):
        if construct.get("kind") != "loop":
            continue
        items = construct.get("items", {})
        found = re.match(r"\s*(\d+)\s*/", str(items.get("iteration", "")))
        header = code.get(construct["lines"][0], "")
        if found and header:
            status = str(items.get("status", "")).lower()
            out[header] = (int(found[1]), status in ("complete", "completed", "done"))
    return out


def import_results(run: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], Any]]:
    """Each legacy import folder with its result: its one output, or all by name, when
    that nested run completed (else MISSING: it is seeded instead)."""
    out: list[tuple[Mapping[str, Any], Any]] = []
    for item in run.get("imports", []):
        outputs = {
            str(b["name"]): b["value"]
            for b in item.get("bindings", [])
            if b.get("kind") == "output" and b.get("execution_id") is None
        }
        result: Any = MISSING
        if item.get("status") == "complete" and outputs:
            result = next(iter(outputs.values())) if len(outputs) == 1 else outputs
        out.append((item, result))
    return out


def match_import(
    imports: list[tuple[Mapping[str, Any], Any]], claimed: set[int], alias: str, use: str
) -> int | None:
    """The legacy import folder (`imports/{handle}--{slug}/`) a call of the `use`d program
    `use` (as `alias`) ran in: the one whose `state.md` names that program, or whose
    `{handle}/{slug}` is it, or whose handle or slug is the alias; the first not taken."""

    def rank(item: Mapping[str, Any]) -> int | None:
        if str(item.get("program") or "") == use:
            return 0
        if f"{item.get('handle')}/{item.get('slug')}" == use:
            return 1
        return 2 if alias in (item.get("handle"), item.get("slug")) else None

    ranked = [
        (found, index)
        for index, (item, _) in enumerate(imports)
        if index not in claimed and (found := rank(item)) is not None
    ]
    return min(ranked)[1] if ranked else None
