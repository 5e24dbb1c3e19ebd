"""Agents, agent segments, imports and pruning in SQL: the second half of sqlstate.py's
run state (its SqlState inherits these), with the connection surface and JSON helpers
both halves share. The same SQL runs on PostgreSQL and SQLite."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from ..protocol import AgentRow, AgentScope, ImportRow, RunStatus, SegmentRow
from ..runs import runs_in_order
from .base import BackendError

__all__ = ["SqlConnection", "SqlMemory"]


class SqlConnection(Protocol):
    """What SqlState needs of a database connection."""

    dialect: str  # "postgres" | "sqlite"
    prefix: str  # "schema." on PostgreSQL, "" on SQLite

    def rows(self, query: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement (in the open transaction, if any); BackendError on failure."""
        ...

    def transaction(self) -> AbstractContextManager[None]:
        """One write transaction (nested calls join the outer one)."""
        ...


class SqlMemory:
    """Agents, segments, imports and pruning over one connection."""

    db: SqlConnection
    runs: Path | None
    user: SqlMemory | None

    def _q(self, query: str) -> str:
        query = query.replace("{p}", self.db.prefix)
        return query.replace("%s", "?") if self.db.dialect == "sqlite" else query

    def _rows(self, query: str, *args: Any) -> list[tuple[Any, ...]]:
        return self.db.rows(self._q(query), args)

    # -- agents ----------------------------------------------------------------------------

    def _agents(self, name: str, scope: AgentScope) -> tuple[SqlMemory, str]:
        if scope != AgentScope.USER:
            return self, name
        return (self.user, name) if self.user is not None else (self, f"__user__{name}")

    def put_agent(
        self,
        name: str,
        scope: AgentScope,
        memory: str,
        *,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Write an agent's memory: execution-scoped agents under their run, project and
        user scoped ones with run_id NULL (user ones in the user database)."""
        if (scope == AgentScope.EXECUTION) != (run_id is not None):
            raise BackendError(f"agent {name!r}: only an execution-scoped agent has a run id")
        store, key = self._agents(name, scope)
        with store.db.transaction():
            store._rows(
                "INSERT INTO {p}agents (name, run_id, scope, memory, metadata) "
                "VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (name, COALESCE(run_id, '__project__')) DO UPDATE SET "
                "memory = excluded.memory, scope = excluded.scope, "
                "metadata = excluded.metadata, updated_at = CURRENT_TIMESTAMP",
                key,
                run_id,
                scope,
                memory,
                _dump(dict(metadata or {})),
            )

    def agent(self, name: str, scope: AgentScope, *, run_id: str | None = None) -> AgentRow | None:
        store, key = self._agents(name, scope)
        rows = store._rows(
            "SELECT name, run_id, scope, memory, metadata FROM {p}agents WHERE name = %s AND "
            + ("run_id = %s" if run_id is not None else "run_id IS NULL"),
            *((key, run_id) if run_id is not None else (key,)),
        )
        if not rows:
            return None
        r = rows[0]
        return AgentRow(name=name, run_id=r[1], scope=r[2], memory=r[3], metadata=_json(r[4]))

    def add_segment(
        self,
        agent_name: str,
        scope: AgentScope,
        *,
        run_id: str | None = None,
        prompt: str | None,
        summary: str | None,
        metadata: Mapping[str, Any] | None = None,
        number: int | None = None,
    ) -> int:
        """Append one invocation to an agent's history; its segment number (the next,
        1, 2, …, or `number`, the one its segment file has: recorded again, it replaces)."""
        store, key = self._agents(agent_name, scope)
        with store.db.transaction():
            if number is None:
                rows = store._rows(
                    "SELECT COALESCE(max(segment_number), 0) FROM {p}agent_segments "
                    "WHERE agent_name = %s AND COALESCE(run_id, '__project__') = %s",
                    key,
                    run_id or "__project__",
                )
                number = int(rows[0][0]) + 1
            store._rows(
                "INSERT INTO {p}agent_segments (agent_name, run_id, segment_number, prompt, "
                "summary, metadata) VALUES (%s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (agent_name, COALESCE(run_id, '__project__'), segment_number) "
                "DO UPDATE SET prompt = excluded.prompt, summary = excluded.summary, "
                "metadata = excluded.metadata, timestamp = CURRENT_TIMESTAMP",
                key,
                run_id,
                number,
                prompt,
                summary,
                _dump(dict(metadata or {})),
            )
        return number

    def segments(
        self, agent_name: str, scope: AgentScope, *, run_id: str | None = None
    ) -> list[SegmentRow]:
        store, key = self._agents(agent_name, scope)
        rows = store._rows(
            "SELECT run_id, segment_number, prompt, summary, metadata FROM {p}agent_segments "
            "WHERE agent_name = %s AND COALESCE(run_id, '__project__') = %s "
            "ORDER BY segment_number",
            key,
            run_id or "__project__",
        )
        return [
            SegmentRow(
                agent_name=agent_name,
                run_id=r[0],
                segment_number=int(r[1]),
                prompt=r[2],
                summary=r[3],
                metadata=_json(r[4]),
            )
            for r in rows
        ]

    def agents_of(self, run_id: str) -> list[tuple[AgentRow, list[SegmentRow]]]:
        """The agents a run's sessions used (the run's own and the project and user
        ones whose segments name the run), each with the segments the run added."""
        found: list[tuple[AgentRow, list[SegmentRow]]] = []
        stores: list[SqlMemory] = [self] if self.user is None else [self, self.user]
        for store in stores:
            rows = store._rows(
                "SELECT agent_name, run_id, segment_number, prompt, summary, metadata "
                "FROM {p}agent_segments WHERE run_id = %s OR run_id IS NULL "
                "ORDER BY agent_name, segment_number",
                run_id,
            )
            by_agent: dict[tuple[str, str | None], list[SegmentRow]] = {}
            for r in rows:
                metadata = _json(r[5])
                if r[1] is None and metadata.get("run_id") != run_id:
                    continue
                segment = SegmentRow(
                    agent_name=r[0],
                    run_id=r[1],
                    segment_number=int(r[2]),
                    prompt=r[3],
                    summary=r[4],
                    metadata=metadata,
                )
                by_agent.setdefault((r[0], r[1]), []).append(segment)
            for (name, agent_run), segments in sorted(by_agent.items(), key=lambda i: i[0][0]):
                agent = store._rows(
                    "SELECT name, run_id, scope, memory, metadata FROM {p}agents WHERE name = %s "
                    "AND COALESCE(run_id, '__project__') = %s",
                    name,
                    agent_run or "__project__",
                )
                if agent:
                    a = agent[0]
                    row = AgentRow(
                        name=a[0], run_id=a[1], scope=a[2], memory=a[3], metadata=_json(a[4])
                    )
                    found.append((row, segments))
        return found

    # -- imports ---------------------------------------------------------------------------

    def put_import(
        self,
        run_id: str,
        alias: str,
        source_ref: str,
        *,
        content_hash: str | None,
        requires_schema: Any = None,
        ensures_schema: Any = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        with self.db.transaction():
            self._rows(
                "INSERT INTO {p}imports (alias, run_id, source_ref, resolved_at, "
                "requires_schema, ensures_schema, content_hash, metadata) "
                "VALUES (%s, %s, %s, CURRENT_TIMESTAMP, %s, %s, %s, %s) "
                "ON CONFLICT (alias, run_id) DO UPDATE SET source_ref = excluded.source_ref, "
                "resolved_at = excluded.resolved_at, requires_schema = excluded.requires_schema, "
                "ensures_schema = excluded.ensures_schema, content_hash = excluded.content_hash, "
                "metadata = excluded.metadata",
                alias,
                run_id,
                source_ref,
                None if requires_schema is None else _dump(requires_schema),
                None if ensures_schema is None else _dump(ensures_schema),
                content_hash,
                _dump(dict(metadata or {})),
            )

    def imports(self, run_id: str) -> list[ImportRow]:
        rows = self._rows(
            "SELECT alias, run_id, source_ref, content_hash, requires_schema, ensures_schema, "
            "metadata FROM {p}imports WHERE run_id = %s ORDER BY alias",
            run_id,
        )
        return [
            ImportRow(
                alias=r[0],
                run_id=r[1],
                source_ref=r[2],
                content_hash=r[3],
                requires_schema=_value(r[4]),
                ensures_schema=_value(r[5]),
                metadata=_json(r[6]),
            )
            for r in rows
        ]

    # -- pruning ---------------------------------------------------------------------------

    def prune(self, keep: int) -> list[str]:
        """Delete the run data (executions, bindings, imports, execution-scoped agents and
        their segments, attachments) of every ended run but the `keep` newest. The run
        row stays: receipts reference it, and the ledger is append-only."""
        with self.db.transaction():
            rows = self._rows(
                "SELECT id FROM {p}run WHERE status <> %s ORDER BY started_at DESC, id DESC",
                RunStatus.RUNNING,
            )
            newest_first = [str(r[0]) for r in rows]
            if self.runs is not None:
                # ids (and SQLite's timestamps) have second resolution: two runs made in
                # one second are ordered by their folders' creation, as `latest` is
                position = {run.run_id: i for i, run in enumerate(runs_in_order(self.runs))}
                newest_first.sort(key=lambda run_id: position.get(run_id, -1), reverse=True)
            old = newest_first[keep:]
            pruned = []
            for run_id in old:
                counts = [
                    self._rows(f"SELECT count(*) FROM {{p}}{t} WHERE run_id = %s", run_id)[0][0]
                    for t in ("execution", "bindings", "imports", "agents", "agent_segments")
                ]
                if not any(counts):
                    continue
                for table in ("bindings", "imports", "agent_segments", "agents", "execution"):
                    self._rows(f"DELETE FROM {{p}}{table} WHERE run_id = %s", run_id)
                pruned.append(run_id)
        for run_id in pruned:
            if self.runs is not None:
                folder = self.runs / run_id / "attachments"
                # binding values only: a version's frame (.opwm) is canonical truth
                for item in sorted(folder.glob("*.md")) if folder.is_dir() else []:
                    item.unlink(missing_ok=True)
        return pruned


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _value(stored: Any) -> Any:
    """A JSON column as a value (psycopg decodes JSONB; SQLite hands back text)."""
    if isinstance(stored, str | bytes):
        try:
            return json.loads(stored)
        except ValueError:
            raise BackendError(f"a stored JSON column cannot be read: {stored[:60]!r}") from None
    return stored


def _json(stored: Any) -> dict[str, Any]:
    value = _value(stored)
    return value if isinstance(value, dict) else {}


def _time(stored: Any) -> str | None:
    if stored is None:
        return None
    if isinstance(stored, dt.datetime):
        return stored.isoformat()
    return str(stored)
