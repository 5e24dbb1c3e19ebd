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
from .sqlite_schema import LATEST, MIGRATIONS
from .sqlstate import SqlState

__all__ = ["LATEST", "MIGRATIONS", "SqliteAudit", "SqliteBackend", "memory_state"]


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
