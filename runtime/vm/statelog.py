"""A VM run's seed 004 rows on the filesystem: `runs/{id}/vm/state.jsonl`.

The filesystem backend has no tables, so the recorder appends what it would write to
them as events, one fsynced canonical-JSON line each, `{"seq", "prev", "op", ...}`,
`prev` the SHA-256 of the previous line's bytes (`null` first), verified on load like
the journal: a line edited, removed or reordered is refused with its file and line; a
torn last line (an append a crash cut) is dropped. No line holds a time (run.json and
vm.log.md do), so a replay writes the same log as the run it replays. `read_state` folds the events into
the rows a SQL store would hold (the same ids, parents, statuses, metadata, bindings by
name and scope, agents, segments, imports), which is what `prosec inspect` and the
conformance suite read.

Ops: `run` (status, metadata), `begin` (id, parent_id, index, text, metadata), `end`
(id, status, error, metadata), `note` (id, metadata), `bind` (name, kind, value,
execution_id, source, metadata), `agent`, `segment`, `import`.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..canonical import canonical_json
from ..fsio import append_line, repair_torn_tail
from ..protocol import AgentScope, BindingKind, ExecutionStatus, RunStatus
from ..userjson import JSONInputError, loads

__all__ = ["STATE", "FsSink", "StateLog", "StateLogError", "prune_states", "read_state"]

STATE = Path("vm") / "state.jsonl"


class StateLogError(ValueError):  # a user error: the run's files were damaged
    """A state log that does not verify (names the file and line)."""


class StateLog:
    """Append-only, hash-chained events of one run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.events: list[dict[str, Any]] = []
        self._head: str | None = None
        self._lock = threading.Lock()
        repair_torn_tail(path)
        if not path.is_file():
            return
        for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
            where = f"{path}:{number}"
            try:
                event = loads(raw, source=where)
            except JSONInputError as exc:
                raise StateLogError(f"{where}: not a state line ({exc})") from None
            if not isinstance(event, dict) or event.get("seq") != number:
                raise StateLogError(f"{where}: expected event {number}")
            if event.get("prev") != self._head:
                raise StateLogError(f"{where}: the chain is broken (prev does not match)")
            if not isinstance(event.get("op"), str):
                raise StateLogError(f"{where}: an event needs an op")
            self.events.append(event)
            self._head = hashlib.sha256(raw).hexdigest()

    def append(self, op: str, **fields: Any) -> None:
        with self._lock:
            event = {**fields, "op": op, "seq": len(self.events) + 1, "prev": self._head}
            line = canonical_json(event)
            append_line(self.path, line)
            self._head = hashlib.sha256(line).hexdigest()
            self.events.append(event)


def read_state(run_dir: Path) -> dict[str, Any]:
    """The rows of a run's state log (empty ones when it has none)."""
    return fold(StateLog(run_dir / STATE).events)


def fold(events: list[dict[str, Any]]) -> dict[str, Any]:
    run: dict[str, Any] = {}
    executions: dict[int, dict[str, Any]] = {}
    bindings: dict[tuple[str, int], dict[str, Any]] = {}
    agents: dict[tuple[str, str], dict[str, Any]] = {}
    segments: dict[tuple[str, str, int], dict[str, Any]] = {}
    imports: dict[str, dict[str, Any]] = {}
    for e in events:
        op = e["op"]
        if op == "run":
            resumed = int(run.get("metadata", {}).get("resumed", 0))
            if e["status"] == RunStatus.RUNNING and run:
                resumed += 1
            metadata = {**run.get("metadata", {}), **e.get("metadata", {})}
            if resumed:
                metadata["resumed"] = resumed
            run.update(status=e["status"], metadata=metadata)
        elif op == "begin":
            executions[int(e["id"])] = {
                "id": int(e["id"]),
                "statement_index": e["index"],
                "statement_text": e["text"],
                "status": ExecutionStatus.EXECUTING,
                "error_message": None,
                "parent_id": e["parent_id"],
                "metadata": dict(e["metadata"]),
            }
        elif op in ("end", "note"):
            row = executions[int(e["id"])]
            row["metadata"] = {**row["metadata"], **e.get("metadata", {})}
            if op == "end":
                row.update(status=e["status"], error_message=e["error"])
        elif op == "bind":
            scope = -1 if e["execution_id"] is None else int(e["execution_id"])
            bindings[(e["name"], scope)] = {
                "name": e["name"],
                "execution_id": e["execution_id"],
                "binding": e["kind"],
                "value": e["value"],
                "source_statement": e["source"],
                "metadata": dict(e.get("metadata", {})),
            }
        elif op == "agent":
            agents[(e["name"], e["scope"])] = {
                k: e[k] for k in ("name", "scope", "memory", "metadata")
            }
        elif op == "segment":
            segments[(e["name"], e["scope"], int(e["number"]))] = {
                "agent_name": e["name"],
                "scope": e["scope"],
                "segment_number": int(e["number"]),
                "prompt": e["prompt"],
                "summary": e["summary"],
                "metadata": e.get("metadata", {}),
            }
        elif op == "import":
            imports[e["alias"]] = {
                k: e[k]
                for k in ("alias", "source_ref", "content_hash", "requires", "ensures", "metadata")
            }
    return {
        "run": run,
        "executions": [executions[i] for i in sorted(executions)],
        "bindings": [bindings[k] for k in sorted(bindings, key=lambda k: (k[1], k[0]))],
        "agents": [agents[k] for k in sorted(agents)],
        "segments": [segments[k] for k in sorted(segments)],
        "imports": [imports[k] for k in sorted(imports)],
    }


class FsSink:
    """The recorder's Sink over a run's state log."""

    def __init__(self, path: Path) -> None:
        self.log = StateLog(path)
        self._rows = sum(1 for e in self.log.events if e["op"] == "begin")

    def _state(self) -> dict[str, Any]:
        return fold(self.log.events)

    def rows(self) -> dict[str, tuple[int, str, int, dict[str, Any]]]:
        return {
            str(r["metadata"]["key"]): (
                r["id"],
                str(r["status"]),
                int(r["statement_index"]),
                r["metadata"],
            )
            for r in self._state()["executions"]
            if isinstance(r["metadata"].get("key"), str)
        }

    def anonymous(self) -> dict[str, str]:
        return {
            str(b["metadata"]["key"]): b["name"]
            for b in self._state()["bindings"]
            if b["name"].startswith("anon_") and isinstance(b["metadata"].get("key"), str)
        }

    def run_started(
        self, *, root_path: str | None, root_source: str | None, metadata: Mapping[str, Any]
    ) -> None:
        self.log.append(
            "run",
            status=RunStatus.RUNNING,
            root_path=root_path,
            metadata=dict(metadata),
        )

    def run_ended(self, status: RunStatus) -> None:
        self.log.append("run", status=status)

    def begin(
        self, *, parent_id: int | None, index: int, text: str | None, metadata: Mapping[str, Any]
    ) -> int:
        self._rows += 1
        row = self._rows
        self.log.append(
            "begin",
            id=row,
            parent_id=parent_id,
            index=index,
            text=text,
            metadata=dict(metadata),
        )
        return row

    def end(
        self, row: int, status: ExecutionStatus, error: str | None, metadata: Mapping[str, Any]
    ) -> None:
        self.log.append("end", id=row, status=status, error=error, metadata=dict(metadata))

    def annotate(self, row: int, metadata: Mapping[str, Any]) -> None:
        self.log.append("note", id=row, metadata=dict(metadata))

    def binding(
        self,
        name: str,
        kind: BindingKind,
        value: str,
        execution_id: int | None,
        source: str | None,
        metadata: Mapping[str, Any],
    ) -> None:
        self.log.append(
            "bind",
            name=name,
            kind=kind,
            value=value,
            execution_id=execution_id,
            source=source,
            metadata=dict(metadata),
        )

    def agent(self, name: str, scope: AgentScope, memory: str, metadata: Mapping[str, Any]) -> None:
        self.log.append("agent", name=name, scope=scope, memory=memory, metadata=dict(metadata))

    def segment(
        self,
        name: str,
        scope: AgentScope,
        number: int,
        prompt: str | None,
        summary: str | None,
        metadata: Mapping[str, Any],
    ) -> None:
        self.log.append(
            "segment",
            name=name,
            scope=scope,
            number=number,
            prompt=prompt,
            summary=summary,
            metadata=dict(metadata),
        )

    def imported(
        self,
        alias: str,
        source_ref: str,
        content_hash: str | None,
        requires: Any,
        ensures: Any,
        metadata: Mapping[str, Any],
    ) -> None:
        self.log.append(
            "import",
            alias=alias,
            source_ref=source_ref,
            content_hash=content_hash,
            requires=requires,
            ensures=ensures,
            metadata=dict(metadata),
        )


def prune_states(runs: Path, keep: int) -> list[str]:
    """`prosec db prune` on the filesystem, as on the SQL stores: of every ended run but
    the `keep` newest (ended: its state log's run status, else its vm.log end marker;
    oldest first by creation, as `latest` orders them), the VM run data (executions,
    bindings, imports, agents, segments) leaves `vm/state.jsonl`, which keeps its `run`
    events, re-chained, as the SQL stores keep the run row; newest first, the runs
    pruned (one whose log held nothing else is not counted)."""
    from ..fsio import atomic_write_bytes
    from ..runs import runs_in_order

    ended: list[tuple[str, StateLog | None]] = []
    for run in reversed(runs_in_order(runs)):
        path = run.path / STATE
        log = StateLog(path) if path.is_file() else None
        status = fold(log.events)["run"].get("status") if log is not None else None
        # ended: its state log says so; a run without VM state: its end marker
        if (status or RunStatus.RUNNING) != RunStatus.RUNNING or (
            status is None and run.finished() is not None
        ):
            ended.append((run.run_id, log))
    pruned = []
    for run_id, log in ended[keep:]:
        kept = [e for e in log.events if e["op"] == "run"] if log is not None else []
        if log is None or len(kept) == len(log.events):
            continue
        lines, head = [], None
        for seq, event in enumerate(kept, start=1):
            line = canonical_json({**event, "seq": seq, "prev": head})
            head = hashlib.sha256(line).hexdigest()
            lines.append(line + b"\n")
        atomic_write_bytes(log.path, b"".join(lines))
        pruned.append(run_id)
    return pruned
