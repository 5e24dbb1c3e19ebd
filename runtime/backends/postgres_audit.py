"""The PostgreSQL backend's rows, read-only, for `prosec receipts verify`.

A read-only session over the schema the backend writes (postgres.py): it creates
nothing, and like the backend it never prints, logs or raises the connection string.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn

import psycopg
from psycopg import sql

from .audit import StoredLedger, StoredPublished, StoredVersion, pending_head
from .base import BackendError
from .postgres import attachment_frame, find_url, redact

__all__ = ["PostgresAudit"]


class PostgresAudit:
    """The rows of a PostgreSQL schema, read in a read-only session (`prosec receipts
    verify`); creates nothing, and like the backend never prints the URL."""

    def __init__(
        self,
        url: str,
        *,
        variable: str = "OPENPROSE_POSTGRES_URL",
        schema: str = "openprose",
        runs: Path | None = None,
    ) -> None:
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", schema):
            raise BackendError(f"schema name {schema!r} must be a lowercase identifier")
        self.__url = url
        self.variable = variable
        self.schema = schema
        self.where = f"postgres:{schema}"
        self._runs = runs
        try:
            self._db = psycopg.connect(url, autocommit=True)
            self._db.execute("SET default_transaction_read_only = on")
            row = self._db.execute("SELECT to_regclass(%s)", (f"{schema}.receipt",)).fetchone()
        except psycopg.Error as exc:
            self._fail(exc)
        if row is None or row[0] is None:
            self._db.close()
            raise BackendError(f"postgres (${variable}): schema {schema} holds no prosec state")

    @classmethod
    def from_env(cls, root: Path, env: Mapping[str, str]) -> PostgresAudit:
        found = find_url(root, env)
        if found is None:
            raise BackendError(
                "verifying the postgres backend needs OPENPROSE_POSTGRES_URL (in ROOT/.env or "
                "the environment) or DATABASE_URL; its value is never printed"
            )
        variable, url = found
        return cls(
            url,
            variable=variable,
            schema=env.get("OPENPROSE_POSTGRES_SCHEMA", "openprose"),
            runs=root / "runs",
        )

    def __repr__(self) -> str:
        return f"PostgresAudit(${self.variable}, schema={self.schema!r})"

    def _fail(self, exc: BaseException) -> NoReturn:
        text = redact(f"{type(exc).__name__}: {exc}", self.__url)
        raise BackendError(f"postgres (${self.variable}): {text}") from None

    def _t(self, table: str) -> sql.Composed:
        return sql.SQL("{}.{}").format(sql.Identifier(self.schema), sql.Identifier(table))

    def _rows(self, query: sql.Composed, *args: Any) -> list[tuple[Any, ...]]:
        try:
            return self._db.execute(query, args).fetchall()
        except psycopg.Error as exc:
            self._fail(exc)

    def ledgers(self) -> Iterator[StoredLedger]:
        columns = (
            "content_hash",
            "prev",
            "status",
            "contract_fingerprint",
            "wake",
            "input_fingerprints",
            "fingerprints",
            "semantic_diff",
            "cost",
            "sig",
        )
        rows = self._rows(
            sql.SQL("SELECT node, id, line, {} FROM {} ORDER BY node, id").format(
                sql.SQL(", ").join(sql.Identifier(c) for c in columns), self._t("receipt")
            )
        )
        by_node: dict[str, list[tuple[Any, ...]]] = {}
        for row in rows:
            by_node.setdefault(str(row[0]), []).append(row)
        for node, chain in sorted(by_node.items()):
            yield StoredLedger(
                node=node,
                file=f"{self.where}.receipt",
                rows=tuple((f"id {row[1]}", bytes(row[2])) for row in chain),
                columns=tuple(dict(zip(columns, row[3:], strict=True)) for row in chain),
            )

    def versions(self) -> Iterator[StoredVersion]:
        for node, version, artifact, attachment in self._rows(
            sql.SQL(
                "SELECT node, version, artifact, attachment_path FROM {} ORDER BY node, version"
            ).format(self._t("world_model_version"))
        ):
            yield StoredVersion(
                node=str(node),
                address=str(version),
                frame=self._frame(artifact, attachment),
                file=f"{self.where}.world_model_version",
                position=f"version {version}",
            )

    def has_version(self, node: str, address: str) -> bool:
        return self.frame(node, address) is not None

    def frame(self, node: str, address: str) -> bytes | None:
        rows = self._rows(
            sql.SQL("SELECT artifact, attachment_path FROM {} WHERE version = %s").format(
                self._t("world_model_version")
            ),
            address,
        )
        return self._frame(*rows[0]) if rows else None

    def _frame(self, artifact: Any, attachment: Any) -> bytes | None:
        """A version's frame: its artifact, the attachment file here, else the
        database's copy of it (x_attachment, where the schema has that table)."""
        frame = attachment_frame((artifact, attachment), self._runs)
        if frame is not None or attachment is None:
            return frame
        table = self._rows(
            sql.SQL("SELECT to_regclass(%s)").format(), f"{self.schema}.x_attachment"
        )
        if not table or table[0][0] is None:
            return None
        found = self._rows(
            sql.SQL("SELECT data FROM {} WHERE path = %s").format(self._t("x_attachment")),
            attachment,
        )
        return bytes(found[0][0]) if found else None

    def published(self) -> Iterator[StoredPublished]:
        for node, version in self._rows(
            sql.SQL("SELECT node, version FROM {} ORDER BY node").format(
                self._t("world_model_published")
            )
        ):
            yield StoredPublished(
                node=str(node),
                address=str(version),
                file=f"{self.where}.world_model_published",
                position=f"node {node}",
            )

    def pending_heads(self) -> dict[str, str | None]:
        rows = self._rows(
            sql.SQL("SELECT node, record FROM {} ORDER BY node").format(self._t("x_pending"))
        )
        return {str(node): pending_head(bytes(record)) for node, record in rows}

    def close(self) -> None:
        try:
            self._db.close()
        except psycopg.Error as exc:
            self._fail(exc)
