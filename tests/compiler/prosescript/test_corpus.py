"""The ProseScript corpus: each invalid example reports its own code; the rich program is clean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prosec.compiler.config import Config
from prosec.compiler.diagnostics import CODES
from prosec.compiler.discover import discover
from prosec.compiler.lint import lint_refs

from ...conftest import CORPUS, Runner

EXAMPLES = sorted((CORPUS / "invalid").glob("prosescript_*"))


def codes_in(directory: Path) -> set[str]:
    return {d.code for d in lint_refs(discover([directory], directory), Config()).diagnostics}


def test_every_prosescript_code_has_an_invalid_example() -> None:
    owned = {code for code in CODES if code.startswith("prosescript_")}
    assert {p.name for p in EXAMPLES} == owned


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_invalid_example_reports_exactly_its_code(example: Path) -> None:
    assert codes_in(example) == {example.name}


def test_rich_program_lints_clean() -> None:
    assert codes_in(CORPUS / "prosescript") == set()


def test_cli_reports_the_code_with_its_position(run_prosec: Runner) -> None:
    example = CORPUS / "invalid" / "prosescript_undefined_name"
    result = run_prosec("lint", "--format", "json", example)
    assert result.returncode == 1, result.stderr
    (record,) = json.loads(result.stdout)
    assert record["code"] == "prosescript_undefined_name"
    source = next(example.glob("*.prose.md")).read_text(encoding="utf-8").split("\n")
    line = source[record["line"] - 1]
    assert line[record["column"] - 1 :].startswith("sources")


def test_cli_passes_the_rich_program(run_prosec: Runner) -> None:
    result = run_prosec("lint", CORPUS / "prosescript")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""
