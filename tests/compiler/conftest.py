"""Compiler test fixtures: builds never touch the real user cache directory."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def build_cache_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """PROSEC_CACHE_DIR in a fresh temporary directory, for every `prosec build` a test runs."""
    directory = tmp_path_factory.mktemp("prosec-cache")
    monkeypatch.setenv("PROSEC_CACHE_DIR", str(directory))
    return directory
