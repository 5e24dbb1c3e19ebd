"""Backend factories for the conformance suite. PostgreSQL must be reachable: tests
FAIL (never skip) when it is not."""

from __future__ import annotations

import os
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

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"
Factory = Callable[[], Backend]


def postgres_url() -> str:
    return os.environ.get("PROSEC_TEST_POSTGRES_URL", DEFAULT_URL)


@pytest.fixture
def pg_schema() -> Iterator[str]:
    schema = f"prosec_t_{secrets.token_hex(4)}"
    try:
        probe = psycopg.connect(postgres_url(), connect_timeout=5)
    except psycopg.Error as exc:  # fail loudly, naming no connection string
        pytest.fail(
            "PostgreSQL is required for the postgres backend tests (127.0.0.1:5432, "
            f"database test, or $PROSEC_TEST_POSTGRES_URL): {type(exc).__name__}"
        )
    probe.close()
    yield schema
    with psycopg.connect(postgres_url(), autocommit=True) as db:
        db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture(params=BACKEND_NAMES)
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
        return lambda: PostgresBackend(postgres_url(), schema=schema)
    assert kind == "in-context", f"backend {kind!r} has no conformance factory"
    shared = InContextBackend()
    return lambda: shared
