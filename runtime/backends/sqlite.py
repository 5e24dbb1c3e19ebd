"""The SQLite backend: the same durable state in one file, ROOT/state/prosec.db.

Receipts are stored as their canonical JSON lines (plus projected columns for queries)
and verified on load exactly like a JSON Lines ledger. WAL journal, synchronous=FULL:
a committed transaction survives a crash. The runner lock is a flock beside the file.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..canonical import canonical_json, sha256_token
from ..protocol import PendingRecord, Receipt
from ..reconciler import NodeHead
from .audit import StoredLedger, StoredPublished, StoredVersion, pending_head
from .base import BackendError, heads_from_ledger, stored_json, verified_line, verify_stored
from .locks import FileLock
from .sqlstate import SqlState

__all__ = ["SqliteAudit", "SqliteBackend", "memory_state"]

_V1 = """
CREATE TABLE IF NOT EXISTS receipt (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT,
    node TEXT NOT NULL,
    content_hash TEXT NOT NULL UNIQUE,
    prev TEXT,
    status TEXT NOT NULL,
    line BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS receipt_node ON receipt(node, id);
CREATE TABLE IF NOT EXISTS world_model_version (
    version TEXT NOT NULL, node TEXT NOT NULL, artifact BLOB NOT NULL,
    PRIMARY KEY (node, version)
);
CREATE TABLE IF NOT EXISTS world_model_published (node TEXT PRIMARY KEY, version TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS x_kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS x_pending (node TEXT PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS x_inbox (id INTEGER PRIMARY KEY AUTOINCREMENT, wake TEXT NOT NULL);
"""

# seed 004's other tables, in one file's types: TIMESTAMPTZ is ISO text defaulting to
# CURRENT_TIMESTAMP, JSONB is JSON text, SERIAL an AUTOINCREMENT rowid; the same keys,
# checks, foreign keys and indexes (but the GIN index, which SQLite has not)
_V2 = """
CREATE TABLE IF NOT EXISTS run (
    id TEXT PRIMARY KEY,
    root_path TEXT,
    root_source TEXT,
    started_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    status TEXT NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'completed', 'failed', 'interrupted')),
    state_mode TEXT NOT NULL DEFAULT 'sqlite',
    metadata TEXT DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS execution (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES run(id) ON DELETE CASCADE,
    statement_index INTEGER NOT NULL,
    statement_text TEXT,
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'executing', 'completed', 'failed', 'skipped')),
    started_at TEXT,
    completed_at TEXT,
    error_message TEXT,
    parent_id INTEGER REFERENCES execution(id) ON DELETE CASCADE,
    metadata TEXT DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS bindings (
    name TEXT NOT NULL,
    run_id TEXT NOT NULL REFERENCES run(id) ON DELETE CASCADE,
    execution_id INTEGER,
    binding TEXT NOT NULL CHECK (binding IN ('input', 'output', 'let', 'const')),
    value TEXT,
    source_statement TEXT,
    created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    attachment_path TEXT,
    metadata TEXT DEFAULT '{}'
);
CREATE UNIQUE INDEX IF NOT EXISTS bindings_scope_key
    ON bindings (name, run_id, COALESCE(execution_id, -1));
CREATE TABLE IF NOT EXISTS agents (
    name TEXT NOT NULL,
    run_id TEXT,
    scope TEXT NOT NULL CHECK (scope IN ('execution', 'project', 'user', 'custom')),
    memory TEXT,
    created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    metadata TEXT DEFAULT '{}'
);
CREATE UNIQUE INDEX IF NOT EXISTS agents_scope_key
    ON agents (name, COALESCE(run_id, '__project__'));
CREATE TABLE IF NOT EXISTS agent_segments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_name TEXT NOT NULL,
    run_id TEXT,
    segment_number INTEGER NOT NULL,
    timestamp TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    prompt TEXT,
    summary TEXT,
    metadata TEXT DEFAULT '{}'
);
CREATE UNIQUE INDEX IF NOT EXISTS agent_segments_scope_key
    ON agent_segments (agent_name, COALESCE(run_id, '__project__'), segment_number);
CREATE TABLE IF NOT EXISTS imports (
    alias TEXT NOT NULL,
    run_id TEXT NOT NULL REFERENCES run(id) ON DELETE CASCADE,
    source_ref TEXT NOT NULL,
    resolved_at TEXT,
    requires_schema TEXT,
    ensures_schema TEXT,
    content_hash TEXT,
    metadata TEXT DEFAULT '{}',
    PRIMARY KEY (alias, run_id)
);
CREATE INDEX IF NOT EXISTS idx_execution_run_id ON execution(run_id);
CREATE INDEX IF NOT EXISTS idx_execution_status ON execution(status);
CREATE INDEX IF NOT EXISTS idx_execution_parent_id ON execution(parent_id)
    WHERE parent_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_bindings_run_id ON bindings(run_id);
CREATE INDEX IF NOT EXISTS idx_bindings_execution_id ON bindings(execution_id)
    WHERE execution_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_agents_run_id ON agents(run_id) WHERE run_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_agents_project_scoped ON agents(name) WHERE run_id IS NULL;
CREATE INDEX IF NOT EXISTS idx_agent_segments_lookup ON agent_segments(agent_name, run_id);
ALTER TABLE receipt ADD COLUMN contract_fingerprint TEXT;
ALTER TABLE receipt ADD COLUMN wake TEXT;
ALTER TABLE receipt ADD COLUMN input_fingerprints TEXT;
ALTER TABLE receipt ADD COLUMN fingerprints TEXT;
ALTER TABLE receipt ADD COLUMN semantic_diff TEXT DEFAULT '{}';
ALTER TABLE receipt ADD COLUMN cost TEXT DEFAULT '{}';
ALTER TABLE receipt ADD COLUMN sig TEXT;
ALTER TABLE receipt ADD COLUMN created_at TEXT;
UPDATE receipt SET
    contract_fingerprint = json_extract(CAST(line AS TEXT), '$.contract_fingerprint'),
    wake = json_extract(CAST(line AS TEXT), '$.wake'),
    input_fingerprints = json_extract(CAST(line AS TEXT), '$.input_fingerprints'),
    fingerprints = json_extract(CAST(line AS TEXT), '$.fingerprints'),
    semantic_diff = json_extract(CAST(line AS TEXT), '$.semantic_diff'),
    cost = json_extract(CAST(line AS TEXT), '$.cost'),
    sig = json_extract(CAST(line AS TEXT), '$.sig')
    WHERE json_valid(CAST(line AS TEXT));
INSERT OR IGNORE INTO run (id, status)
    SELECT DISTINCT run_id, 'completed' FROM receipt WHERE run_id IS NOT NULL;
ALTER TABLE world_model_version ADD COLUMN attachment_path TEXT;
ALTER TABLE world_model_version ADD COLUMN created_at TEXT;
ALTER TABLE world_model_published ADD COLUMN updated_at TEXT
"""
# PRAGMA user_version: 1 is the layout every earlier prosec wrote (its user_version 0)
MIGRATIONS = ((1, _V1), (2, _V2))
LATEST = MIGRATIONS[-1][0]


class SqliteBackend:
    """Durable state in a single SQLite file."""

    name = "sqlite"
    ephemeral = False

    def __init__(self, path: Path, *, runs: Path | None = None) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            # the VM records parallel branches from their threads, one at a time
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self.schema_version = self._migrate()
        except sqlite3.Error as exc:
            raise BackendError(f"cannot open SQLite state {path}: {exc}") from exc
        self._lock = FileLock(path.with_name(path.name + ".lock"))
        self.run_state: SqlState | None = SqlState(_Connection(self._db, path), runs)

    def _migrate(self) -> int:
        """Bring the file to LATEST in one IMMEDIATE transaction (a second opener waits
        for it, then sees the new version); a file a newer prosec wrote is refused."""
        version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
        if version == LATEST:
            return version
        self._db.execute("BEGIN IMMEDIATE")
        try:
            version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
            if version > LATEST:
                raise BackendError(
                    f"SQLite state {self.path} is at version {version}, newer than this "
                    f"prosec knows ({LATEST}); upgrade prosec"
                )
            for step, ddl in MIGRATIONS:
                if step > version:
                    for statement in ddl.split(";"):
                        if statement.strip():
                            self._db.execute(statement)
                    self._db.execute(f"PRAGMA user_version = {step}")
                    version = step
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return version

    def describe(self) -> str:
        return f"sqlite ({self.path})"

    def try_lock(self) -> bool:
        return self._lock.try_lock()

    def unlock(self) -> None:
        self._lock.unlock()

    def _rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise BackendError(f"SQLite state {self.path}: {exc}") from exc

    def _write(self, sql: str, *args: Any) -> None:
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute(sql, args)
        except sqlite3.Error as exc:
            raise BackendError(f"SQLite state {self.path}: {exc}") from exc

    def ledger(self, node: str) -> list[Receipt]:
        rows = self._rows("SELECT line FROM receipt WHERE node = ? ORDER BY id", node)
        lines = [r[0].encode("utf-8") if isinstance(r[0], str) else bytes(r[0]) for r in rows]
        return verify_stored(node, lines, f"{self.path}#{node}")

    def heads(self, nodes: Iterable[str]) -> dict[str, NodeHead]:
        return {node: heads_from_ledger(self.ledger(node)) for node in nodes}

    def repair(self) -> list[str]:
        return []  # transactions never leave a torn record

    def append_receipt(self, run_id: str, receipt: Receipt) -> None:
        node = str(receipt["node"])
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                row = self._db.execute(
                    "SELECT content_hash FROM receipt WHERE node = ? ORDER BY id DESC LIMIT 1",
                    (node,),
                ).fetchone()
                line = verified_line(receipt, row[0] if row else None)
                self._db.execute("INSERT OR IGNORE INTO run (id) VALUES (?)", (run_id,))
                self._db.execute(
                    "INSERT INTO receipt (run_id, node, content_hash, prev, status, line, "
                    "contract_fingerprint, wake, input_fingerprints, fingerprints, "
                    "semantic_diff, cost, sig, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, CURRENT_TIMESTAMP)",
                    (
                        run_id,
                        node,
                        receipt["content_hash"],
                        receipt["prev"],
                        receipt["status"],
                        line,
                        receipt["contract_fingerprint"],
                        _text(receipt["wake"]),
                        _text(receipt["input_fingerprints"]),
                        _text(receipt["fingerprints"]),
                        _text(receipt["semantic_diff"]),
                        _text(receipt["cost"]),
                        _text(receipt["sig"]),
                    ),
                )
        except sqlite3.Error as exc:
            raise BackendError(f"SQLite state {self.path}: {exc}") from exc

    def put_version(
        self, node: str, address: str, frame: bytes, *, run_id: str | None = None
    ) -> None:
        if sha256_token(frame) != address:
            raise BackendError(f"version of {node!r} does not hash to {address}")
        self._write(
            "INSERT OR IGNORE INTO world_model_version (version, node, artifact, created_at) "
            "VALUES (?, ?, ?, CURRENT_TIMESTAMP)",
            address,
            node,
            frame,
        )

    def get_version(self, node: str, address: str) -> bytes:
        rows = self._rows(
            "SELECT artifact FROM world_model_version WHERE node = ? AND version = ?", node, address
        )
        if not rows:
            raise BackendError(f"version {address} of {node!r} is missing")
        frame = bytes(rows[0][0])
        if sha256_token(frame) != address:
            raise BackendError(f"version {address} of {node!r} is corrupt (hash mismatch)")
        return frame

    def published_version(self, node: str) -> str | None:
        rows = self._rows("SELECT version FROM world_model_published WHERE node = ?", node)
        return str(rows[0][0]) if rows else None

    def set_published(self, node: str, address: str, files: Mapping[str, bytes]) -> None:
        self._write(
            "INSERT INTO world_model_published (node, version, updated_at) "
            "VALUES (?, ?, CURRENT_TIMESTAMP) ON CONFLICT(node) DO UPDATE SET "
            "version = excluded.version, updated_at = excluded.updated_at",
            node,
            address,
        )

    def get_value(self, key: str) -> Any | None:
        rows = self._rows("SELECT value FROM x_kv WHERE key = ?", key)
        return stored_json(rows[0][0], f"{self.path}: x_kv {key}") if rows else None

    def put_value(self, key: str, value: Any) -> None:
        self._write(
            "INSERT INTO x_kv (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            key,
            canonical_json(value).decode("utf-8"),
        )

    def put_pending(self, node: str, record: PendingRecord) -> None:
        self._write(
            "INSERT INTO x_pending (node, record) VALUES (?, ?) "
            "ON CONFLICT(node) DO UPDATE SET record = excluded.record",
            node,
            canonical_json(dict(record)).decode("utf-8"),
        )

    def pendings(self) -> dict[str, dict[str, Any]]:
        rows = self._rows("SELECT node, record FROM x_pending ORDER BY node")
        return {
            str(node): stored_json(record, f"{self.path}: x_pending {node}")
            for node, record in rows
        }

    def clear_pending(self, node: str) -> None:
        self._write("DELETE FROM x_pending WHERE node = ?", node)

    def enqueue(self, wake: Mapping[str, Any]) -> None:
        self._write("INSERT INTO x_inbox (wake) VALUES (?)", canonical_json(dict(wake)).decode())

    def inbox(self) -> list[tuple[str, dict[str, Any]]]:
        rows = self._rows("SELECT id, wake FROM x_inbox ORDER BY id")
        return [
            (str(wake_id), stored_json(wake, f"{self.path}: x_inbox {wake_id}"))
            for wake_id, wake in rows
        ]

    def take(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany(
                    "DELETE FROM x_inbox WHERE id = ?", [(int(wake_id),) for wake_id in ids]
                )
        except sqlite3.Error as exc:
            raise BackendError(f"SQLite state {self.path}: {exc}") from exc

    def close(self) -> None:
        self.unlock()
        self._db.close()


def memory_state(runs: Path | None) -> SqlState:
    """The run-state tables in an in-memory SQLite database (the in-context backend's
    VM runs: the same tables and queries, gone with the process)."""
    db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA foreign_keys=ON")
    for _, ddl in MIGRATIONS:
        for statement in ddl.split(";"):
            if statement.strip():
                db.execute(statement)
    return SqlState(_Connection(db, Path(":memory:")), runs)


class SqliteAudit:
    """The rows of a SQLite state file, opened read-only (`prosec receipts verify`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        try:
            self._db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            self._db.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except sqlite3.Error as exc:
            raise BackendError(f"SQLite state {path}: {exc}") from exc

    def _rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise BackendError(f"SQLite state {self.path}: {exc}") from exc

    def ledgers(self) -> Iterator[StoredLedger]:
        rows = self._rows(
            "SELECT node, id, content_hash, prev, status, line FROM receipt ORDER BY node, id"
        )
        by_node: dict[str, list[tuple[Any, ...]]] = {}
        for row in rows:
            by_node.setdefault(str(row[0]), []).append(row)
        for node, chain in sorted(by_node.items()):
            yield StoredLedger(
                node=node,
                file=f"{self.path} (table receipt)",
                rows=tuple((f"id {row[1]}", _blob(row[5])) for row in chain),
                columns=tuple(
                    {"content_hash": row[2], "prev": row[3], "status": row[4]} for row in chain
                ),
            )

    def versions(self) -> Iterator[StoredVersion]:
        for node, version, artifact in self._rows(
            "SELECT node, version, artifact FROM world_model_version ORDER BY node, version"
        ):
            yield StoredVersion(
                node=str(node),
                address=str(version),
                frame=None if artifact is None else _blob(artifact),
                file=f"{self.path} (table world_model_version)",
                position=f"version {version}",
            )

    def has_version(self, node: str, address: str) -> bool:
        return bool(
            self._rows(
                "SELECT 1 FROM world_model_version WHERE node = ? AND version = ?", node, address
            )
        )

    def frame(self, node: str, address: str) -> bytes | None:
        rows = self._rows(
            "SELECT artifact FROM world_model_version WHERE node = ? AND version = ?", node, address
        )
        return _blob(rows[0][0]) if rows and rows[0][0] is not None else None

    def published(self) -> Iterator[StoredPublished]:
        for node, version in self._rows(
            "SELECT node, version FROM world_model_published ORDER BY node"
        ):
            yield StoredPublished(
                node=str(node),
                address=str(version),
                file=f"{self.path} (table world_model_published)",
                position=f"node {node}",
            )

    def pending_heads(self) -> dict[str, str | None]:
        heads: dict[str, str | None] = {}
        for node, record in self._rows("SELECT node, record FROM x_pending ORDER BY node"):
            heads[str(node)] = pending_head(_blob(record))
        return heads

    def close(self) -> None:
        self._db.close()


class _Connection:
    """The backend's connection as sqlstate.py's SqlConnection (nested transactions
    join the outer one)."""

    dialect = "sqlite"
    prefix = ""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self._db = db
        self._path = path
        self._depth = 0

    def rows(self, query: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._db.execute(query, tuple(args)).fetchall()
        except sqlite3.Error as exc:
            raise BackendError(f"SQLite state {self._path}: {exc}") from exc

    @contextmanager
    def transaction(self) -> Iterator[None]:
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self.rows("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield
        except BaseException:
            self._depth = 0
            self.rows("ROLLBACK")
            raise
        self._depth = 0
        self.rows("COMMIT")


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _blob(value: Any) -> bytes:
    """A stored line or artifact as bytes (SQLite hands back TEXT as str)."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    return bytes(value) if isinstance(value, bytes | memoryview) else str(value).encode()
