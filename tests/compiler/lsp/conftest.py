"""Fixtures for the language-server tests: a private editor project and a started client."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp

from .client import EDITOR_PROJECT, Editor, server_config, start


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A private copy of corpus/editor, so edits and saves never touch the repository."""
    target = tmp_path / "editor"
    shutil.copytree(EDITOR_PROJECT, target)
    return target


@pytest_lsp.fixture(config=server_config("--debounce-ms", "0"), scope="module")
async def editor(
    lsp_client: Editor, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[None]:
    """One server process per test module; each test opens files of its own project copy."""
    await start(lsp_client, tmp_path_factory.mktemp("workspace"))
    yield
    await lsp_client.shutdown_session()
