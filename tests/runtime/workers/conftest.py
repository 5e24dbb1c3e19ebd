"""PostgreSQL for the workers tests: a fresh schema per test (procrastinate's tables live
in it too), dropped afterwards, and the environment `prosec` needs to reach it."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import psycopg
import pytest


@pytest.fixture
def pg_env(request: pytest.FixtureRequest, postgres_url: str) -> Iterator[dict[str, str]]:
    if request.node.get_closest_marker("postgres") is None:
        pytest.fail(f"{request.node.nodeid} uses PostgreSQL but is not marked postgres")
    schema = f"prosec_w_{secrets.token_hex(4)}"
    yield {"OPENPROSE_POSTGRES_URL": postgres_url, "OPENPROSE_POSTGRES_SCHEMA": schema}
    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE".encode())
