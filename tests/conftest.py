"""Shared fixtures: repository paths, the upstream corpus, PostgreSQL and a runner for the
real CLI.

Test tiers (see the README): `make test` needs nothing beside the checkout; tests marked
`conformance` read the upstream corpus at $UPSTREAM, the reference vectors at
$REFERENCE_VECTORS and the seed documents at $SEEDS; `postgres` tests use the server `postgres_server.py` finds or starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "corpus"
DATA = REPO / "tests" / "data"


def _path_from(variable: str, default: Path) -> Path:
    value = os.environ.get(variable)
    return Path(value).resolve() if value else default.resolve()


# A checkout of openprose-prose; by default the one in the shared/ folder beside the repo.
UPSTREAM = _path_from("UPSTREAM", REPO.parent / "shared" / "upstream" / "openprose-prose")
REFERENCE_VECTORS = _path_from(
    "REFERENCE_VECTORS", UPSTREAM.parent.parent / "conformance" / "reference-vectors.json"
)
# The seeds (the layouts prosec implements); by default the shared/ folder's.
SEEDS = _path_from("SEEDS", REPO.parent / "shared" / "seeds")
# Markers mean what they say: a test using one of these fixtures must carry the marker.
MARKED_FIXTURES = {
    "upstream": "conformance",
    "reference_vectors": "conformance",
    "seeds": "conformance",
    "postgres_url": "postgres",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    unmarked = [
        f"{item.nodeid} (uses {fixture}, not marked {marker})"
        for item in items
        for fixture, marker in MARKED_FIXTURES.items()
        if fixture in getattr(item, "fixturenames", ()) and item.get_closest_marker(marker) is None
    ]
    if unmarked:
        raise pytest.UsageError("unmarked tests: " + "; ".join(unmarked))


@pytest.fixture(scope="session")
def upstream() -> Path:
    if not UPSTREAM.is_dir():
        pytest.fail(
            f"UPSTREAM={UPSTREAM} does not exist; set UPSTREAM to a checkout of openprose-prose",
            pytrace=False,
        )
    return UPSTREAM


@pytest.fixture(scope="session")
def reference_vectors() -> dict[str, Any]:
    """The byte-level facts recorded from the upstream reference implementation."""
    if not REFERENCE_VECTORS.is_file():
        pytest.fail(
            f"REFERENCE_VECTORS={REFERENCE_VECTORS} does not exist; set REFERENCE_VECTORS "
            "to the upstream reference-vectors.json",
            pytrace=False,
        )
    data: dict[str, Any] = json.loads(REFERENCE_VECTORS.read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="session")
def seeds() -> Path:
    """The seed documents (000 legacy .prose/, 001 filesystem, 004 PostgreSQL)."""
    if not SEEDS.is_dir():
        pytest.fail(f"SEEDS={SEEDS} does not exist; set SEEDS to the seeds folder", pytrace=False)
    return SEEDS


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL URL for this session (one per xdist worker); never printed."""
    from .postgres_server import postgres_server

    with postgres_server() as url:
        yield url


def prosec_bin() -> str:
    """The installed `prosec` console script of the interpreter running the tests."""
    candidate = Path(sys.executable).with_name("prosec")
    return str(candidate) if candidate.exists() else "prosec"


Runner = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_prosec() -> Runner:
    """Run the real `prosec` command as a subprocess and capture its output."""

    def run(
        *args: str | os.PathLike[str],
        cwd: Path | None = None,
        input: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [prosec_bin(), *map(str, args)],
            cwd=cwd,
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **(env or {})},
        )

    return run
