"""Run state in SQL: the run lifecycle, executions, bindings, agents, segments, imports.

One module of SQL that PostgreSQL (seed 004's `openprose` schema) and SQLite (the same
tables in one file) both run: `%s` placeholders (turned into `?` for SQLite),
`CURRENT_TIMESTAMP` for the seed's `NOW()`, `RETURNING`, `ON CONFLICT` on the seed's
expression keys, and the seed's recursive scope-resolution query verbatim but for the
schema prefix. JSON columns are written as JSON text (JSONB on PostgreSQL, TEXT on
SQLite) and read back as values; timestamps are read back as ISO 8601 text.

A binding value over ATTACHMENT_LIMIT bytes (seed 004's ~100 KB) is written to
`runs/{run_id}/attachments/{name}.md` (atomically), its path stored in
`attachment_path` relative to the run folder and `value` left as a one-line summary;
`binding_value` reads it back.

A connection is anything with the small `SqlConnection` surface; postgres.py and
sqlite.py adapt theirs (psycopg stays in postgres.py). Agents, segments, imports and
pruning are in sqlmemory.py (SqlState inherits them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..fsio import atomic_write_bytes
from ..protocol import (
    BindingKind,
    BindingRow,
    ExecutionRow,
    ExecutionStatus,
    RunRow,
    RunStatus,
)
from .base import BackendError
from .sqlmemory import SqlConnection, SqlMemory, _dump, _json, _time

__all__ = ["ATTACHMENT_LIMIT", "SqlConnection", "SqlState", "anon_name"]

ATTACHMENT_LIMIT = 100 * 1024
_ANON = re.compile(r"anon_(\d+)")


def anon_name(number: int) -> str:
    """Seed 004's name for an anonymous binding: anon_001, anon_002, …"""
    return f"anon_{number:03d}"


class SqlState(SqlMemory):
    """Run state in the seed 004 tables of one connection; `runs` is ROOT/runs (for
    attachments), `user` the connection of user-scoped agents (OPENPROSE_POSTGRES_USER_URL),
    None to keep them in this database under the name prefix `__user__`."""

    def __init__(
        self, db: SqlConnection, runs: Path | None, *, user: SqlState | None = None
    ) -> None:
        self.db = db
        self.runs = runs
        self.user = user

    # -- runs ------------------------------------------------------------------------------

    def start_run(
        self,
        run_id: str,
        *,
        root_path: str | None,
        root_source: str | None,
        metadata: Mapping[str, Any],
        resumed: bool = False,
    ) -> None:
        """Register a run as running (a resumed one is running again, its metadata's
        `resumed` count one higher)."""
        with self.db.transaction():
            found = self._rows("SELECT metadata FROM {p}run WHERE id = %s", run_id)
            if found:
                before = _json(found[0][0])
                merged = {**before, **metadata}
                if resumed:
                    merged["resumed"] = int(before.get("resumed", 0)) + 1
                self._rows(
                    "UPDATE {p}run SET status = %s, root_path = COALESCE(%s, root_path), "
                    "root_source = COALESCE(%s, root_source), metadata = %s, "
                    "updated_at = CURRENT_TIMESTAMP WHERE id = %s",
                    RunStatus.RUNNING,
                    root_path,
                    root_source,
                    _dump(merged),
                    run_id,
                )
            else:
                self._rows(
                    "INSERT INTO {p}run (id, root_path, root_source, status, state_mode, "
                    "metadata) VALUES (%s, %s, %s, %s, %s, %s)",
                    run_id,
                    root_path,
                    root_source,
                    RunStatus.RUNNING,
                    self.db.dialect,
                    _dump(dict(metadata)),
                )

    def end_run(self, run_id: str, status: RunStatus) -> None:
        with self.db.transaction():
            self._rows(
                "UPDATE {p}run SET status = %s, updated_at = CURRENT_TIMESTAMP WHERE id = %s",
                status,
                run_id,
            )
            if status != RunStatus.RUNNING:
                self._close_open(run_id, status)

    def _close_open(self, run_id: str, status: RunStatus) -> None:
        """Close what was executing when a run ended: a node whose receipt the run
        committed (the cut came between the commit and its row) ends as that receipt
        did; anything else did not finish and failed."""
        rows = self._executions(run_id)
        claimed = {str(e["metadata"].get("receipt")) for e in rows}
        for row in rows:
            if row["status"] not in (ExecutionStatus.EXECUTING, ExecutionStatus.PENDING):
                continue
            found = self._rows(
                "SELECT content_hash, status FROM {p}receipt WHERE run_id = %s AND node = %s "
                "ORDER BY id DESC LIMIT 1",
                run_id,
                row["statement_text"],
            )
            if found and str(found[0][0]) not in claimed:
                claimed.add(str(found[0][0]))
                outcome = {
                    "rendered": ExecutionStatus.COMPLETED,
                    "skipped": ExecutionStatus.SKIPPED,
                }.get(str(found[0][1]), ExecutionStatus.FAILED)
                self.end_execution(row["id"], outcome, metadata={"receipt": str(found[0][0])})
            else:
                self.end_execution(row["id"], ExecutionStatus.FAILED, error_message=f"run {status}")

    def interrupt_running(self, keep: str | None = None) -> list[str]:
        """Under the runner lock no other run is going on: every run still `running`
        (but `keep`) was cut by a crash or a stop; mark it interrupted."""
        with self.db.transaction():
            rows = self._rows(
                "SELECT id FROM {p}run WHERE status = %s ORDER BY id", RunStatus.RUNNING
            )
            cut = [str(r[0]) for r in rows if r[0] != keep]
            for run_id in cut:
                self.end_run(run_id, RunStatus.INTERRUPTED)
        return cut

    def run(self, run_id: str) -> RunRow | None:
        rows = self._rows(
            "SELECT id, root_path, root_source, status, state_mode, started_at, updated_at, "
            "metadata FROM {p}run WHERE id = %s",
            run_id,
        )
        if not rows:
            return None
        r = rows[0]
        return RunRow(
            id=r[0],
            root_path=r[1],
            root_source=r[2],
            status=r[3],
            state_mode=r[4],
            started_at=_time(r[5]) or "",
            updated_at=_time(r[6]) or "",
            metadata=_json(r[7]),
        )

    # -- executions ------------------------------------------------------------------------

    def begin_execution(
        self,
        run_id: str,
        statement_index: int,
        statement_text: str | None,
        *,
        parent_id: int | None = None,
        metadata: Mapping[str, Any] | None = None,
        status: ExecutionStatus = ExecutionStatus.EXECUTING,
    ) -> int:
        """A new execution row (executing, started now); its id (a scope for bindings)."""
        with self.db.transaction():
            rows = self._rows(
                "INSERT INTO {p}execution (run_id, statement_index, statement_text, status, "
                "started_at, parent_id, metadata) VALUES (%s, %s, %s, %s, CURRENT_TIMESTAMP, "
                "%s, %s) RETURNING id",
                run_id,
                statement_index,
                statement_text,
                status,
                parent_id,
                _dump(dict(metadata or {})),
            )
        return int(rows[0][0])

    def end_execution(
        self,
        execution_id: int,
        status: ExecutionStatus,
        *,
        error_message: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Finish an execution; `metadata` is merged into what it has."""
        with self.db.transaction():
            found = self._rows("SELECT metadata FROM {p}execution WHERE id = %s", execution_id)
            if not found:
                raise BackendError(f"execution {execution_id} does not exist")
            merged = {**_json(found[0][0]), **(metadata or {})}
            self._rows(
                "UPDATE {p}execution SET status = %s, completed_at = CURRENT_TIMESTAMP, "
                "error_message = %s, metadata = %s WHERE id = %s",
                status,
                error_message,
                _dump(merged),
                execution_id,
            )

    def set_execution_metadata(self, execution_id: int, updates: Mapping[str, Any]) -> None:
        """Merge keys into an execution's metadata (a loop's current_iteration)."""
        with self.db.transaction():
            found = self._rows("SELECT metadata FROM {p}execution WHERE id = %s", execution_id)
            if not found:
                raise BackendError(f"execution {execution_id} does not exist")
            self._rows(
                "UPDATE {p}execution SET metadata = %s WHERE id = %s",
                _dump({**_json(found[0][0]), **updates}),
                execution_id,
            )

    def failures(self, run_id: str, statement_index: int, statement_text: str | None) -> int:
        """How many executions of one statement of a run have failed (the next retry's
        attempt number is this plus one)."""
        rows = self._rows(
            "SELECT count(*) FROM {p}execution WHERE run_id = %s AND statement_index = %s "
            "AND statement_text = %s AND status = %s",
            run_id,
            statement_index,
            statement_text,
            ExecutionStatus.FAILED,
        )
        return int(rows[0][0])

    def executions(self, run_id: str) -> list[ExecutionRow]:
        return self._executions(run_id)

    def _executions(self, run_id: str) -> list[ExecutionRow]:
        rows = self._rows(
            "SELECT id, run_id, statement_index, statement_text, status, started_at, "
            "completed_at, error_message, parent_id, metadata FROM {p}execution "
            "WHERE run_id = %s ORDER BY id",
            run_id,
        )
        return [
            ExecutionRow(
                id=int(r[0]),
                run_id=r[1],
                statement_index=int(r[2]),
                statement_text=r[3],
                status=r[4],
                started_at=_time(r[5]),
                completed_at=_time(r[6]),
                error_message=r[7],
                parent_id=None if r[8] is None else int(r[8]),
                metadata=_json(r[9]),
            )
            for r in rows
        ]

    def scope_chain(self, execution_id: int) -> list[int]:
        """The execution ids from `execution_id` up to its outermost parent."""
        rows = self._rows(
            "WITH RECURSIVE scope_chain AS ("
            " SELECT id, parent_id, 0 AS depth FROM {p}execution WHERE id = %s"
            " UNION ALL"
            " SELECT e.id, e.parent_id, s.depth + 1 FROM {p}execution e"
            " JOIN scope_chain s ON e.id = s.parent_id"
            ") SELECT id FROM scope_chain ORDER BY depth",
            execution_id,
        )
        return [int(r[0]) for r in rows]

    # -- bindings --------------------------------------------------------------------------

    def put_binding(
        self,
        run_id: str,
        name: str,
        kind: BindingKind,
        value: str,
        *,
        execution_id: int | None = None,
        source_statement: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> BindingRow:
        """Write (or overwrite) a binding in its scope (execution_id None: the root)."""
        attachment = None
        stored = value
        data = value.encode("utf-8")
        if len(data) > ATTACHMENT_LIMIT:
            if self.runs is None:
                raise BackendError(f"binding {name!r} is too large to store without a run folder")
            suffix = "" if execution_id is None else f"@{execution_id}"
            attachment = f"attachments/{_file_name(name)}{suffix}.md"
            atomic_write_bytes(self.runs / run_id / attachment, data)
            stored = f"{name}: {len(data)} bytes, see {attachment}"
        with self.db.transaction():
            self._rows(
                "INSERT INTO {p}bindings (name, run_id, execution_id, binding, value, "
                "source_statement, attachment_path, metadata) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (name, run_id, COALESCE(execution_id, -1)) DO UPDATE SET "
                "binding = excluded.binding, value = excluded.value, "
                "source_statement = excluded.source_statement, "
                "attachment_path = excluded.attachment_path, metadata = excluded.metadata, "
                "updated_at = CURRENT_TIMESTAMP",
                name,
                run_id,
                execution_id,
                kind,
                stored,
                source_statement,
                attachment,
                _dump(dict(metadata or {})),
            )
        return BindingRow(
            name=name,
            run_id=run_id,
            execution_id=execution_id,
            binding=kind,
            value=stored,
            source_statement=source_statement,
            attachment_path=attachment,
            metadata=dict(metadata or {}),
        )

    def put_anonymous(
        self,
        run_id: str,
        value: str,
        *,
        execution_id: int | None = None,
        source_statement: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> BindingRow:
        """A session's output with no name of its own: the run's next anon_NNN."""
        with self.db.transaction():
            names = self._rows(
                "SELECT name FROM {p}bindings WHERE run_id = %s AND name LIKE %s",
                run_id,
                "anon\\_%" if self.db.dialect == "postgres" else "anon_%",
            )
            used = [int(m.group(1)) for (n,) in names if (m := _ANON.fullmatch(str(n)))]
            return self.put_binding(
                run_id,
                anon_name(max(used, default=0) + 1),
                BindingKind.LET,
                value,
                execution_id=execution_id,
                source_statement=source_statement,
                metadata=metadata,
            )

    def resolve(self, run_id: str, name: str, execution_id: int | None) -> BindingRow | None:
        """Seed 004's scope resolution: the binding `name` in the innermost scope of the
        chain from `execution_id` up, else the root scope."""
        rows = self._rows(
            "WITH RECURSIVE scope_chain AS ("
            " SELECT id, parent_id FROM {p}execution WHERE id = %s"
            " UNION ALL"
            " SELECT e.id, e.parent_id FROM {p}execution e JOIN scope_chain s ON e.id = s.parent_id"
            ") SELECT " + _BINDING_COLUMNS + " FROM {p}bindings b"
            " WHERE b.name = %s AND b.run_id = %s"
            " AND (b.execution_id IN (SELECT id FROM scope_chain) OR b.execution_id IS NULL)"
            " ORDER BY CASE WHEN b.execution_id IS NULL THEN 1 ELSE 0 END,"
            " b.execution_id DESC NULLS LAST LIMIT 1",
            -1 if execution_id is None else execution_id,
            name,
            run_id,
        )
        return _binding(rows[0]) if rows else None

    def bindings(self, run_id: str) -> list[BindingRow]:
        rows = self._rows(
            "SELECT " + _BINDING_COLUMNS + " FROM {p}bindings b WHERE b.run_id = %s "
            "ORDER BY COALESCE(b.execution_id, -1), b.name",
            run_id,
        )
        return [_binding(r) for r in rows]

    def binding_value(self, row: BindingRow) -> str:
        """A binding's full value (read from its attachment when it has one)."""
        if row["attachment_path"] is None:
            return row["value"] or ""
        if self.runs is None:
            raise BackendError(f"binding {row['name']!r} is an attachment without a run folder")
        path = self.runs / row["run_id"] / row["attachment_path"]
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise BackendError(f"{path}: the attachment of {row['name']!r}: {exc}") from None


_BINDING_COLUMNS = (
    "b.name, b.run_id, b.execution_id, b.binding, b.value, b.source_statement, "
    "b.attachment_path, b.metadata"
)


def _binding(r: tuple[Any, ...]) -> BindingRow:
    return BindingRow(
        name=r[0],
        run_id=r[1],
        execution_id=None if r[2] is None else int(r[2]),
        binding=r[3],
        value=r[4],
        source_statement=r[5],
        attachment_path=r[6],
        metadata=_json(r[7]),
    )


def _file_name(name: str) -> str:
    """A binding name as a file name (service bindings are `alias.name`)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)
