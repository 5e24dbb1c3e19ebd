"""Backend factories for the conformance suite. PostgreSQL comes from the session's
`postgres_url` fixture: the server at $PROSEC_TEST_POSTGRES_URL, else a private one."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from prosec.runtime.backends import BACKEND_NAMES, Backend
from prosec.runtime.backends.filesystem import FilesystemBackend
from prosec.runtime.backends.incontext import InContextBackend
from prosec.runtime.backends.postgres import PostgresBackend
from prosec.runtime.backends.sqlite import SqliteBackend

Factory = Callable[[], Backend]


@pytest.fixture
def pg_schema(request: pytest.FixtureRequest, postgres_url: str) -> Iterator[str]:
    """A fresh schema name, dropped afterwards (parallel runs never share one)."""
    if request.node.get_closest_marker("postgres") is None:
        pytest.fail(f"{request.node.nodeid} uses PostgreSQL but is not marked postgres")
    schema = f"prosec_t_{secrets.token_hex(4)}"
    yield schema
    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture(
    params=[
        pytest.param(name, marks=pytest.mark.postgres) if name == "postgres" else name
        for name in BACKEND_NAMES
    ]
)
def factory(request: pytest.FixtureRequest, tmp_path: Path) -> Factory:
    """A function returning a (new handle on the same) backend store; every registered
    backend runs the suite."""
    kind = request.param
    if kind == "filesystem":
        return lambda: FilesystemBackend(tmp_path / "state")
    if kind == "sqlite":
        return lambda: SqliteBackend(tmp_path / "state" / "prosec.db")
    if kind == "postgres":
        schema = request.getfixturevalue("pg_schema")
        url = request.getfixturevalue("postgres_url")
        return lambda: PostgresBackend(url, schema=schema)
    assert kind == "in-context", f"backend {kind!r} has no conformance factory"
    shared = InContextBackend()
    return lambda: shared
