"""The ProseScript corpus: each invalid example reports its own code; the rich program is clean."""

from __future__ import annotations

import json
import shutil
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


def test_cli_lints_and_builds_the_program_of_the_new_forms(
    run_prosec: Runner, tmp_path: Path
) -> None:
    # corpus/pantry-restock uses every form beyond the reference grammar (README)
    program = tmp_path / "pantry-restock"
    shutil.copytree(CORPUS / "pantry-restock", program)
    lint = run_prosec("lint", program)
    assert (lint.returncode, lint.stdout) == (0, ""), lint.stderr
    build = run_prosec("build", program)
    assert build.returncode == 0, build.stdout + build.stderr
    intent = json.loads((program / "dist" / "manifest.next.json").read_text(encoding="utf-8"))
    edges = {(e["producer"], e["subscriber"], e["facet"]) for e in intent["topology"]["edges"]}
    assert edges == {
        ("pantry-deliveries", "pantry-stock", "@atomic"),
        ("pantry-stock", "restock-plan", "shortages"),
    }
    assert intent["diagnostics"] == []


def test_cli_reports_an_operation_left_to_the_render_as_info(run_prosec: Runner) -> None:
    example = CORPUS / "invalid" / "prosescript_render_operation"
    result = run_prosec("lint", "--format", "json", example)
    assert result.returncode == 0, result.stderr  # an info never fails the lint
    (record,) = json.loads(result.stdout)
    assert (record["code"], record["severity"]) == ("prosescript_render_operation", "info")
    assert "`summarize(…)`" in record["message"]
