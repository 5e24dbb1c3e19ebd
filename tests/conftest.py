"""Shared fixtures: repository paths, the upstream corpus and a runner for the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "corpus"


def shared_dir() -> Path:
    """`../shared` beside the checkout (override with PROSEC_SHARED)."""
    return Path(os.environ.get("PROSEC_SHARED", REPO.parent / "shared")).resolve()


UPSTREAM = shared_dir() / "upstream" / "openprose-prose"


@pytest.fixture(scope="session")
def upstream() -> Path:
    if not UPSTREAM.is_dir():
        pytest.fail(f"upstream corpus not found at {UPSTREAM}; set PROSEC_SHARED")
    return UPSTREAM


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
