"""Every corpus program's compiled intent, snapshot-tested with prosec's own pytest plugin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..conftest import CORPUS


def corpus_projects() -> list[Path]:
    """Each corpus directory holding a program (corpus/invalid holds lint failures)."""
    return sorted(
        path
        for path in CORPUS.iterdir()
        if path.is_dir() and path.name != "invalid" and any(path.rglob("*.prose.md"))
    )


@pytest.mark.parametrize("project", corpus_projects(), ids=lambda path: path.name)
def test_compiled_intent_snapshot(project: Path, prosec_compile: Any, prosec_snapshot: Any) -> None:
    assert prosec_compile(project, allow_errors=True) == prosec_snapshot
