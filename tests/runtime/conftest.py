"""Shared fixtures for the runtime tests: where ../shared lives, and small builders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def shared_dir() -> Path:
    """The project's shared/ folder: $PROSEC_SHARED, else ../shared beside the repo."""
    env = os.environ.get("PROSEC_SHARED")
    return Path(env) if env else REPO.parent / "shared"


def upstream_fixtures() -> Path:
    return shared_dir() / "upstream/openprose-prose/packages/reactor-devtools/fixtures"


@pytest.fixture(scope="session")
def shared() -> Path:
    path = shared_dir()
    if not path.is_dir():  # fail loudly: the conformance data is required
        raise AssertionError(f"shared data not found at {path}; set PROSEC_SHARED")
    return path
