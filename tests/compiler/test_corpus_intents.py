"""Every corpus program's compiled intent, snapshot-tested with prosec's own pytest plugin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..conftest import CORPUS
from .corpus_support import EXPECTED_CODES


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


@pytest.mark.parametrize("project", corpus_projects(), ids=lambda path: path.name)
def test_corpus_program_builds_with_only_its_expected_codes(project: Path) -> None:
    from prosec.compiler import config
    from prosec.compiler.pipeline import compile_project

    result = compile_project(project, config.load(project).with_overrides(offline_tools=True))
    codes = {d.code for d in result.diagnostics}
    assert codes == EXPECTED_CODES.get(project.name, set())


@pytest.mark.parametrize("project", corpus_projects(), ids=lambda path: path.name)
def test_corpus_program_intent_passes_the_schema(project: Path) -> None:
    """The build checks only the semantic rules of what it emits: its output must meet
    the schema (and each validator's truth schema) by construction."""
    from prosec.compiler import config
    from prosec.compiler.pipeline import compile_project
    from prosec.runtime.intent_check import iter_problems

    result = compile_project(project, config.load(project).with_overrides(offline_tools=True))
    assert result.intent is not None
    semantic = [str(p) for p in iter_problems(result.intent, schema=False)]
    # the schema finds nothing beyond the semantic rules (programs with errors break those)
    assert [str(p) for p in iter_problems(result.intent)] == semantic
    assert not semantic or not result.writable
