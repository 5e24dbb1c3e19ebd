"""Where a VM run's seed 004 rows go: the SQL tables of the configured store
(PostgreSQL, SQLite), an in-context run's in-memory SQLite database, or the
filesystem's hash-chained vm/state.jsonl (statelog.py). The recorder (record.py)
decides what the rows are; a sink only stores them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..protocol import AgentScope, BindingKind, ExecutionStatus, RunStatus
from .record import Sink

if TYPE_CHECKING:
    from ..backends import Backend
    from ..backends.sqlstate import SqlState

__all__ = ["SqlSink", "open_sink"]


class SqlSink:
    """A run's rows in the seed 004 tables of a SQL store (PostgreSQL, SQLite)."""

    def __init__(self, state: SqlState, run_id: str) -> None:
        self.state = state
        self.run_id = run_id

    def rows(self) -> dict[str, tuple[int, str, int, dict[str, Any]]]:
        found = {}
        for row in self.state.executions(self.run_id):
            key = row["metadata"].get("key")
            if isinstance(key, str):
                found[key] = (
                    row["id"],
                    str(row["status"]),
                    row["statement_index"],
                    dict(row["metadata"]),
                )
        return found

    def anonymous(self) -> dict[str, str]:
        return {
            str(row["metadata"]["key"]): row["name"]
            for row in self.state.bindings(self.run_id)
            if row["name"].startswith("anon_") and isinstance(row["metadata"].get("key"), str)
        }

    def run_started(
        self, *, root_path: str | None, root_source: str | None, metadata: Mapping[str, Any]
    ) -> None:
        resumed = self.state.run(self.run_id) is not None
        self.state.start_run(
            self.run_id,
            root_path=root_path,
            root_source=root_source,
            metadata=metadata,
            resumed=resumed,
        )

    def run_ended(self, status: RunStatus) -> None:
        self.state.end_run(self.run_id, status)

    def begin(
        self, *, parent_id: int | None, index: int, text: str | None, metadata: Mapping[str, Any]
    ) -> int:
        return self.state.begin_execution(
            self.run_id, index, text, parent_id=parent_id, metadata=metadata
        )

    def end(
        self, row: int, status: ExecutionStatus, error: str | None, metadata: Mapping[str, Any]
    ) -> None:
        self.state.end_execution(row, status, error_message=error, metadata=metadata)

    def annotate(self, row: int, metadata: Mapping[str, Any]) -> None:
        self.state.set_execution_metadata(row, metadata)

    def binding(
        self,
        name: str,
        kind: BindingKind,
        value: str,
        execution_id: int | None,
        source: str | None,
        metadata: Mapping[str, Any],
    ) -> None:
        self.state.put_binding(
            self.run_id,
            name,
            kind,
            value,
            execution_id=execution_id,
            source_statement=source,
            metadata=metadata,
        )

    def agent(self, name: str, scope: AgentScope, memory: str, metadata: Mapping[str, Any]) -> None:
        run_id = self.run_id if scope == AgentScope.EXECUTION else None
        self.state.put_agent(name, scope, memory, run_id=run_id, metadata=metadata)

    def segment(
        self,
        name: str,
        scope: AgentScope,
        number: int,
        prompt: str | None,
        summary: str | None,
        metadata: Mapping[str, Any],
    ) -> None:
        run_id = self.run_id if scope == AgentScope.EXECUTION else None
        self.state.add_segment(
            name,
            scope,
            run_id=run_id,
            prompt=prompt,
            summary=summary,
            metadata=metadata,
            number=number,
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
        self.state.put_import(
            self.run_id,
            alias,
            source_ref,
            content_hash=content_hash,
            requires_schema=requires,
            ensures_schema=ensures,
            metadata=metadata,
        )


def open_sink(backend: Backend, run_dir: Path, run_id: str) -> Sink:
    """Where a run's rows go: the SQL store's tables, an in-context run's in-memory
    SQLite database, else (the filesystem) the run's vm/state.jsonl."""
    if backend.run_state is not None:
        return SqlSink(backend.run_state, run_id)
    memory = getattr(backend, "vm_state", None)
    if callable(memory):
        return SqlSink(memory(run_dir.parent), run_id)
    from .statelog import STATE, FsSink

    return FsSink(run_dir / STATE)
