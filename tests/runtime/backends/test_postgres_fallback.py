"""With no PostgreSQL server answering, the `postgres` tests start a private one (pgserver)
instead of failing or skipping. The probe is pointed at a closed port to prove it."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from prosec.runtime.backends.postgres import PostgresBackend

from ...conftest import REPO
from ...postgres_server import URL_VARIABLE, answers, postgres_server, private_server
from .test_conformance import receipt

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


def closed_port_url() -> str:
    with socket.socket() as probe:  # a port nothing listens on once this closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"postgresql://postgres@127.0.0.1:{port}/test"


def test_a_private_server_starts_when_the_probe_finds_none(monkeypatch: pytest.MonkeyPatch) -> None:
    probed = closed_port_url()
    monkeypatch.setenv(URL_VARIABLE, probed)
    assert not answers(probed)
    with postgres_server() as url:
        assert url != probed and answers(url)
        backend = PostgresBackend(url, schema="fallback")
        first = receipt("a", None, 1)
        backend.append_receipt("20260101-000000-aaaaaa", first)
        assert PostgresBackend(url, schema="fallback").ledger("a") == [first]
    assert not answers(url)  # stopped


def test_the_private_server_leaves_nothing_behind() -> None:
    with private_server() as (url, directory):
        assert answers(url) and (directory / "PG_VERSION").is_file()
    assert not answers(url) and not directory.exists()


def test_the_postgres_tests_pass_against_a_private_server(tmp_path: Path) -> None:
    """The real `postgres` tests, in a child pytest whose probe finds no server."""
    child = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "--basetemp",
            str(tmp_path / "child"),
            "-m",
            "postgres and not slow",
            "tests/runtime/backends",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, URL_VARIABLE: closed_port_url()},
    )
    assert child.returncode == 0, child.stdout + child.stderr
    passed = re.search(r"(\d+) passed", child.stdout)
    assert passed is not None and int(passed.group(1)) >= 8, child.stdout
