"""The two SQL stores, each with the seed's schema name: PostgreSQL in a database of its
own (schema `openprose`, so seed 004's queries run as written) and SQLite attached as
`openprose` (the same queries, the same table names)."""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from prosec.runtime.backends.postgres import PostgresBackend
from prosec.runtime.backends.sqlite import SqliteBackend
from psycopg.conninfo import make_conninfo

__all__ = ["Store", "database", "postgres_store", "sqlite_store"]


@dataclass
class Store:
    kind: str
    open: Callable[[], PostgresBackend | SqliteBackend]  # a new handle on the same store
    query: Callable[..., list[tuple[Any, ...]]]  # SQL run verbatim on `openprose.` tables
    env: dict[str, str] = field(default_factory=dict)  # what `prosec` needs for the store
    url: str | None = None


@contextmanager
def database(server: str) -> Iterator[str]:
    """A new database on the server (its conninfo), dropped afterwards."""
    name = f"prosec_t_{secrets.token_hex(4)}"
    with psycopg.connect(server, autocommit=True) as db:
        db.execute(f"CREATE DATABASE {name}")
    try:
        yield make_conninfo(server, dbname=name)
    finally:
        with psycopg.connect(server, autocommit=True) as db:
            db.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def postgres_store(url: str, runs: Path, user_url: str | None = None) -> Store:
    def query(text: str, *args: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(url, autocommit=True) as db:
            cursor = db.execute(text.encode(), args or None)
            return cursor.fetchall() if cursor.description else []

    env = {"OPENPROSE_POSTGRES_URL": url}
    if user_url:
        env["OPENPROSE_POSTGRES_USER_URL"] = user_url
    return Store(
        kind="postgres",
        open=lambda: PostgresBackend(url, runs=runs, user_url=user_url),
        query=query,
        env=env,
        url=url,
    )


def sqlite_store(path: Path, runs: Path) -> Store:
    def query(text: str, *args: Any) -> list[tuple[Any, ...]]:
        db = sqlite3.connect(":memory:", isolation_level=None)
        try:
            db.execute("ATTACH DATABASE ? AS openprose", (str(path),))
            return db.execute(text.replace("%s", "?"), args).fetchall()
        finally:
            db.close()

    return Store(kind="sqlite", open=lambda: SqliteBackend(path, runs=runs), query=query)
