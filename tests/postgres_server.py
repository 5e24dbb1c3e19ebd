"""The PostgreSQL server the `postgres` tests use: the one at $PROSEC_TEST_POSTGRES_URL
(default 127.0.0.1:5432, database `test`) when it answers, else a private server started
with pgserver (bundled PostgreSQL binaries) in a temporary directory and removed after.

The private server's directory is a fresh one directly under the system temp directory,
not under pytest's: run as root, pgserver starts PostgreSQL as an unprivileged user, which
must be able to reach it, and pytest keeps its own temp root private to the user."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

URL_VARIABLE = "PROSEC_TEST_POSTGRES_URL"
DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"


def probed_url() -> str:
    return os.environ.get(URL_VARIABLE, DEFAULT_URL)


def answers(url: str) -> bool:
    """Whether a server accepts a connection at `url` within a few seconds."""
    try:
        psycopg.connect(url, connect_timeout=3).close()
    except psycopg.Error:
        return False
    return True


@contextmanager
def private_server() -> Iterator[tuple[str, Path]]:
    """Start a PostgreSQL server in a new temporary directory (its data and socket);
    yield its URL and the directory, then stop it and remove the directory."""
    import pgserver

    directory = Path(tempfile.mkdtemp(prefix="prosec-pg-"))
    server = pgserver.get_server(directory, cleanup_mode="delete")
    try:
        yield server.get_uri("postgres"), directory
    finally:
        server.cleanup()


@contextmanager
def postgres_server() -> Iterator[str]:
    """The probed server's URL, or a private server's when none answers."""
    url = probed_url()
    if answers(url):
        yield url
        return
    with private_server() as (private, _):
        yield private
