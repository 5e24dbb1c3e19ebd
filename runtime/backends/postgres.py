"""The PostgreSQL backend: shared, concurrent state for teams (seed 004's schema).

Security: the connection string (OPENPROSE_POSTGRES_URL from ROOT/.env, then the
environment, then DATABASE_URL) is an opaque capability. It is never printed, logged,
stored in run state or put in an exception message: errors are redacted, `describe()`
and `repr()` name only the variable (pg_url.py looks it up and redacts it; pg_values.py
holds what JSONB refuses and how a version row's frame is read, re-exported here). This
module (with postgres_audit.py, its read-only view for `prosec receipts verify`) is the
only user of psycopg.

The schema is seed 004's, all nine tables (pg_schema.py holds the DDL and its versioned
migrations, applied when the backend opens); prosec adds the receipt's canonical line
(`line`, verified on load like any ledger) and the extension tables `x_kv`,
`x_pending`, `x_inbox`, `x_schema_version`. The runner lock is a session advisory lock.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, NoReturn

import psycopg
from psycopg import sql

from ..canonical import canonical_json, sha256_token
from ..fsio import atomic_write_bytes
from ..protocol import PendingRecord, Receipt
from ..reconciler import NodeHead
from .base import (
    BackendError,
    UnstorableError,
    heads_from_ledger,
    stored_json,
    verified_line,
    verify_stored,
)
from .pg_schema import LATEST, MIGRATIONS, VERSION_TABLE
from .pg_url import USER_URL_VARIABLE, find_url, redact
from .pg_values import attachment_frame, jsonb_problem
from .sqlstate import ATTACHMENT_LIMIT, SqlState

__all__ = [
    "USER_URL_VARIABLE",
    "PostgresBackend",
    "attachment_frame",
    "find_url",
    "jsonb_problem",
    "redact",
]


class PostgresBackend:
    """Durable state in a PostgreSQL schema (default `openprose`)."""

    name = "postgres"
    ephemeral = False

    def __init__(
        self,
        url: str,
        *,
        variable: str = "OPENPROSE_POSTGRES_URL",
        schema: str = "openprose",
        runs: Path | None = None,
        user_url: str | None = None,
    ) -> None:
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", schema):
            raise BackendError(f"schema name {schema!r} must be a lowercase identifier")
        self.__url = url
        self.variable = variable
        self.schema = schema
        self._runs = runs
        self._lock_held = False
        self._atomic = False
        try:
            self._db = psycopg.connect(url, autocommit=True)
            self.schema_version = self._migrate()
        except psycopg.Error as exc:
            self._fail(exc)
        # user-scoped agents live in their own database when one is configured
        self._user = (
            PostgresBackend(user_url, variable=USER_URL_VARIABLE, schema=schema, runs=runs)
            if user_url
            else None
        )
        self.run_state: SqlState | None = SqlState(
            _Connection(self), runs, user=self._user.run_state if self._user else None
        )

    def _migrate(self) -> int:
        """Bring the schema to pg_schema.LATEST (one transaction, advisory-locked) and
        return the version; a schema a newer prosec wrote is refused, never touched."""
        version = self._stored_version()
        if version == LATEST:
            return version
        with self._db.transaction():
            self._db.execute(
                "SELECT pg_advisory_xact_lock(hashtext(%s))", (f"prosec-migrate:{self.schema}",)
            )
            self._db.execute(f"CREATE SCHEMA IF NOT EXISTS {self.schema}".encode())
            self._db.execute(VERSION_TABLE.format(schema=self.schema).encode())
            version = self._stored_version() or 0
            if version > LATEST:
                raise BackendError(
                    f"postgres (${self.variable}): schema {self.schema} is at version "
                    f"{version}, newer than this prosec knows ({LATEST}); upgrade prosec"
                )
            for step in MIGRATIONS:
                if step.version > version:
                    self._db.execute(step.ddl.format(schema=self.schema).encode())
                    self._db.execute(
                        sql.SQL("INSERT INTO {} (version, description) VALUES (%s, %s)").format(
                            self._t("x_schema_version")
                        ),
                        (step.version, step.description),
                    )
                    version = step.version
        return version

    def _stored_version(self) -> int | None:
        """The schema's migration version (None before x_schema_version exists)."""
        row = self._db.execute(
            "SELECT to_regclass(%s)", (f"{self.schema}.x_schema_version",)
        ).fetchone()
        if row is None or row[0] is None:
            return None
        found = self._db.execute(
            sql.SQL("SELECT max(version) FROM {}").format(self._t("x_schema_version"))
        ).fetchone()
        return int(found[0]) if found and found[0] is not None else None

    @classmethod
    def from_env(cls, root: Path, env: Mapping[str, str]) -> PostgresBackend:
        found = find_url(root, env)
        if found is None:
            raise BackendError(
                "the postgres backend needs OPENPROSE_POSTGRES_URL (in ROOT/.env or the "
                "environment) or DATABASE_URL; its value is never printed"
            )
        variable, url = found
        return cls(
            url,
            variable=variable,
            schema=env.get("OPENPROSE_POSTGRES_SCHEMA", "openprose"),
            runs=root / "runs",
            user_url=env.get(USER_URL_VARIABLE) or None,
        )

    def __repr__(self) -> str:
        return f"PostgresBackend(${self.variable}, schema={self.schema!r})"

    def describe(self) -> str:
        return f"postgres (${self.variable}, schema {self.schema})"

    def _fail(self, exc: BaseException) -> NoReturn:
        text = redact(f"{type(exc).__name__}: {exc}", self.__url)
        raise BackendError(f"postgres (${self.variable}): {text}") from None

    def _t(self, table: str) -> sql.Composed:
        return sql.SQL("{}.{}").format(sql.Identifier(self.schema), sql.Identifier(table))

    def _rows(self, query: sql.SQL | sql.Composed, *args: Any) -> list[tuple[Any, ...]]:
        try:
            return self._db.execute(query, args).fetchall()
        except psycopg.Error as exc:
            self._fail(exc)

    def _run(self, query: sql.SQL | sql.Composed, *args: Any) -> None:
        try:
            with self._tx():
                self._db.execute(query, args)
        except psycopg.Error as exc:
            self._fail(exc)

    # -- lock ----------------------------------------------------------------------------

    def try_lock(self) -> bool:
        if self._lock_held:
            return True
        key = f"prosec:{self.schema}"
        row = self._rows(sql.SQL("SELECT pg_try_advisory_lock(hashtext(%s))"), key)
        self._lock_held = bool(row[0][0])
        return self._lock_held

    def unlock(self) -> None:
        if self._lock_held:
            self._rows(sql.SQL("SELECT pg_advisory_unlock(hashtext(%s))"), f"prosec:{self.schema}")
            self._lock_held = False

    # -- ledger --------------------------------------------------------------------------

    def ledger(self, node: str) -> list[Receipt]:
        rows = self._rows(
            sql.SQL("SELECT line FROM {} WHERE node = %s ORDER BY id").format(self._t("receipt")),
            node,
        )
        return verify_stored(node, [bytes(r[0]) for r in rows], f"postgres:{self.schema}#{node}")

    def heads(self, nodes: Iterable[str]) -> dict[str, NodeHead]:
        wanted = list(nodes)
        rows = self._rows(
            sql.SQL("SELECT node, line FROM {} WHERE node = ANY(%s) ORDER BY id").format(
                self._t("receipt")
            ),
            wanted,
        )
        lines: dict[str, list[bytes]] = {node: [] for node in wanted}
        for node, line in rows:
            lines[node].append(bytes(line))
        where = f"postgres:{self.schema}"
        return {n: heads_from_ledger(verify_stored(n, lines[n], f"{where}#{n}")) for n in wanted}

    def repair(self) -> list[str]:
        return []  # transactions never leave a torn record

    def append_receipt(self, run_id: str, receipt: Receipt) -> None:
        node = str(receipt["node"])
        try:
            with self._tx():
                self._db.execute(
                    sql.SQL("INSERT INTO {} (id) VALUES (%s) ON CONFLICT DO NOTHING").format(
                        self._t("run")
                    ),
                    (run_id,),
                )
                # serialize appends per node across concurrent runners
                self._db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"node:{node}",))
                row = self._db.execute(
                    sql.SQL(
                        "SELECT content_hash FROM {} WHERE node = %s ORDER BY id DESC LIMIT 1"
                    ).format(self._t("receipt")),
                    (node,),
                ).fetchone()
                line = verified_line(receipt, row[0] if row else None)
                self._db.execute(
                    sql.SQL(
                        "INSERT INTO {} (run_id, node, contract_fingerprint, wake, "
                        "input_fingerprints, fingerprints, semantic_diff, prev, status, cost, "
                        "sig, content_hash, line) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, "
                        "%s, %s, %s, %s)"
                    ).format(self._t("receipt")),
                    (
                        run_id,
                        node,
                        receipt["contract_fingerprint"],
                        json.dumps(receipt["wake"]),
                        json.dumps(receipt["input_fingerprints"]),
                        json.dumps(receipt["fingerprints"]),
                        json.dumps(receipt["semantic_diff"]),
                        receipt["prev"],
                        receipt["status"],
                        json.dumps(receipt["cost"]),
                        json.dumps(receipt["sig"]),
                        receipt["content_hash"],
                        line,
                    ),
                )
        except psycopg.Error as exc:
            self._fail(exc)

    # -- versions --------------------------------------------------------------------------

    def put_version(
        self, node: str, address: str, frame: bytes, *, run_id: str | None = None
    ) -> None:
        if sha256_token(frame) != address:
            raise BackendError(f"version of {node!r} does not hash to {address}")
        attachment = None
        if len(frame) > ATTACHMENT_LIMIT and run_id is not None:
            # seed 004: a large canonical artifact is an attachment, named by the row; its
            # bytes are in x_attachment (any machine reads them there) and, where the run
            # folder is, a file in its attachments/ written (fsynced) before the row
            attachment = f"runs/{run_id}/attachments/{address.removeprefix('sha256:')}.opwm"
            if self._runs is not None and (self._runs / run_id).is_dir():
                atomic_write_bytes(self._runs.parent / attachment, frame)
        try:
            with self._tx():
                if attachment is not None:
                    self._db.execute(
                        sql.SQL(
                            "INSERT INTO {} (path, data) VALUES (%s, %s) ON CONFLICT DO NOTHING"
                        ).format(self._t("x_attachment")),
                        (attachment, frame),
                    )
                self._db.execute(
                    sql.SQL(
                        "INSERT INTO {} (version, node, artifact, attachment_path) "
                        "VALUES (%s, %s, %s, %s) ON CONFLICT (version) DO NOTHING"
                    ).format(self._t("world_model_version")),
                    (address, node, None if attachment else frame, attachment),
                )
        except psycopg.Error as exc:
            self._fail(exc)

    def get_version(self, node: str, address: str) -> bytes:
        rows = self._rows(
            sql.SQL("SELECT artifact, attachment_path FROM {} WHERE version = %s").format(
                self._t("world_model_version")
            ),
            address,
        )
        frame = attachment_frame(rows[0], self._runs) if rows else None
        if frame is None and rows and rows[0][1] is not None:
            # no attachment file here (another machine committed it): the database's copy
            found = self._rows(
                sql.SQL("SELECT data FROM {} WHERE path = %s").format(self._t("x_attachment")),
                rows[0][1],
            )
            frame = bytes(found[0][0]) if found else None
        if frame is None:
            raise BackendError(f"version {address} of {node!r} is missing")
        if sha256_token(frame) != address:
            raise BackendError(f"version {address} of {node!r} is corrupt (hash mismatch)")
        return frame

    @contextmanager
    def atomically(self, notify: tuple[str, str] | None = None) -> Iterator[None]:
        """The writes inside as one transaction, all or none (a worker's commit); with
        `notify` (channel, payload), a NOTIFY delivered when, and only if, it commits."""
        try:
            with self._db.transaction():
                self._atomic = True
                try:
                    yield
                finally:
                    self._atomic = False
                if notify is not None:
                    self._db.execute("SELECT pg_notify(%s, %s)", notify)
        except psycopg.Error as exc:
            self._fail(exc)

    def _tx(self) -> AbstractContextManager[Any]:
        """A write's own transaction, or none inside `atomically` (no savepoint: one
        failing write fails the whole commit anyway)."""
        return nullcontext() if self._atomic else self._db.transaction()

    def connect(self, **options: Any) -> psycopg.Connection[Any]:
        """A new connection to the same database (its errors are redacted by `_fail`)."""
        try:
            return psycopg.connect(self.__url, autocommit=True, **options)
        except psycopg.Error as exc:
            self._fail(exc)

    def fail(self, exc: BaseException) -> NoReturn:
        """Raise `exc` as a BackendError with the connection string redacted."""
        self._fail(exc)

    def published_version(self, node: str) -> str | None:
        rows = self._rows(
            sql.SQL("SELECT version FROM {} WHERE node = %s").format(
                self._t("world_model_published")
            ),
            node,
        )
        return str(rows[0][0]) if rows else None

    def set_published(self, node: str, address: str, files: Mapping[str, bytes]) -> None:
        self._run(
            sql.SQL(
                "INSERT INTO {} (node, version) VALUES (%s, %s) ON CONFLICT (node) "
                "DO UPDATE SET version = EXCLUDED.version, updated_at = NOW()"
            ).format(self._t("world_model_published")),
            node,
            address,
        )

    # -- kv, pending, inbox ----------------------------------------------------------------

    def get_value(self, key: str) -> Any | None:
        rows = self._rows(
            sql.SQL("SELECT value::text FROM {} WHERE key = %s").format(self._t("x_kv")), key
        )
        return stored_json(rows[0][0], f"x_kv {key}") if rows else None

    def put_value(self, key: str, value: Any) -> None:
        problem = jsonb_problem(value)
        if problem is not None:
            raise UnstorableError(f"the PostgreSQL backend cannot store {key}: {problem}")
        self._run(
            sql.SQL(
                "INSERT INTO {} (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
            ).format(self._t("x_kv")),
            key,
            canonical_json(value).decode("utf-8"),
        )

    def put_pending(self, node: str, record: PendingRecord) -> None:
        self._run(
            sql.SQL(
                "INSERT INTO {} (node, record) VALUES (%s, %s) "
                "ON CONFLICT (node) DO UPDATE SET record = EXCLUDED.record"
            ).format(self._t("x_pending")),
            node,
            canonical_json(dict(record)),
        )

    def pendings(self) -> dict[str, dict[str, Any]]:
        rows = self._rows(
            sql.SQL("SELECT node, record FROM {} ORDER BY node").format(self._t("x_pending"))
        )
        return {str(node): stored_json(bytes(record), f"x_pending {node}") for node, record in rows}

    def clear_pending(self, node: str) -> None:
        self._run(sql.SQL("DELETE FROM {} WHERE node = %s").format(self._t("x_pending")), node)

    def enqueue(self, wake: Mapping[str, Any]) -> None:
        # a queued trigger's data is stored as JSONB when it is served: refuse now, before
        # the caller is told "queued", what JSONB would refuse then
        problem = jsonb_problem(wake.get("data"))
        if problem is not None:
            raise UnstorableError(
                f"the PostgreSQL backend cannot store this trigger data: {problem}"
            )
        self._run(
            sql.SQL("INSERT INTO {} (wake) VALUES (%s)").format(self._t("x_inbox")),
            canonical_json(dict(wake)),
        )

    def inbox(self) -> list[tuple[str, dict[str, Any]]]:
        rows = self._rows(sql.SQL("SELECT id, wake FROM {} ORDER BY id").format(self._t("x_inbox")))
        return [
            (str(wake_id), stored_json(bytes(wake), f"x_inbox {wake_id}")) for wake_id, wake in rows
        ]

    def take(self, ids: Sequence[str]) -> None:
        if ids:
            self._run(
                sql.SQL("DELETE FROM {} WHERE id = ANY(%s)").format(self._t("x_inbox")),
                [int(wake_id) for wake_id in ids],
            )

    def close(self) -> None:
        try:
            self.unlock()
            self._db.close()
        except psycopg.Error as exc:
            self._fail(exc)
        if self._user is not None:
            self._user.close()


class _Connection:
    """The backend's connection as sqlstate.py's SqlConnection: errors redacted."""

    dialect = "postgres"

    def __init__(self, backend: PostgresBackend) -> None:
        self._backend = backend
        self.prefix = f"{backend.schema}."

    def rows(self, query: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            cursor = self._backend._db.execute(query.encode(), tuple(args))
            return cursor.fetchall() if cursor.description is not None else []
        except psycopg.Error as exc:
            self._backend._fail(exc)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        try:
            with self._backend._db.transaction():
                yield
        except psycopg.Error as exc:
            self._backend._fail(exc)
