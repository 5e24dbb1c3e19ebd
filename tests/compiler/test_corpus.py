"""Our own corpus lints clean, in-process and through the real `prosec lint` command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from prosec.compiler.diagnostics import CODES, Severity

from ..conftest import CORPUS, Runner
from .corpus_support import EXPECTED_CODES, INVALID, lint_dir, programs


def test_corpus_has_at_least_25_programs() -> None:
    assert len(programs()) >= 25


@pytest.mark.parametrize("program", programs(), ids=lambda p: p.name)
def test_program_lints_clean(program: Path) -> None:
    found = lint_dir(program)
    expected = EXPECTED_CODES.get(program.name, set())
    assert [d for d in found if d.severity is not Severity.INFO and d.code not in expected] == []
    assert {d.code for d in found} == expected


@pytest.mark.parametrize("program", programs(), ids=lambda p: p.name)
def test_program_is_a_small_project(program: Path) -> None:
    sources = sorted((program / "src").glob("*.prose.md"))
    assert len(sources) >= 2


def test_corpus_covers_every_kind() -> None:
    kinds = set()
    for program in programs():
        for source in (program / "src").glob("*.prose.md"):
            for line in source.read_text(encoding="utf-8").splitlines()[:8]:
                if line.startswith("kind:"):
                    kinds.add(line.partition(":")[2].strip())
    assert kinds == {"responsibility", "function", "gateway", "pattern", "test"}


def test_clean_program_exits_zero(run_prosec: Runner) -> None:
    # the greenhouse program: its gateway, its responsibility and the test contract of it
    result = run_prosec("lint", CORPUS / "greenhouse-climate")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""
    assert "0 errors, 0 warnings, 0 info in 3 files" in result.stderr


def test_whole_corpus_exits_zero_without_invalid(run_prosec: Runner) -> None:
    # the scenarios that exist to show a wiring error or warning are pinned one by one
    shown = [
        arg
        for name in ("wiring-cycle", "wiring-unsatisfied", "wiring-truth-ambiguous", "menu-board")
        for arg in ("--exclude", CORPUS / name)
    ]
    result = run_prosec("lint", "--format", "json", CORPUS, "--exclude", INVALID, *shown)
    assert result.returncode == 0, result.stderr
    records = json.loads(result.stdout)
    assert {r["severity"] for r in records} <= {"info"}


def test_error_exits_one_in_every_format(run_prosec: Runner) -> None:
    target = INVALID / "kind_retired"
    for fmt in ("text", "json", "github", "sarif"):
        result = run_prosec("lint", "--format", fmt, target, cwd=target)
        assert result.returncode == 1, (fmt, result.stderr)
        assert "kind_retired" in result.stdout


def test_text_format(run_prosec: Runner) -> None:
    target = INVALID / "kind_retired"
    result = run_prosec("lint", ".", cwd=target)
    assert result.stdout.startswith("old-service.prose.md:3:1: error kind_retired ")
    assert result.stderr.strip() == "1 error, 0 warnings, 0 info in 1 file"


def test_json_format(run_prosec: Runner) -> None:
    target = INVALID / "section_duplicate"
    result = run_prosec("lint", "--format", "json", ".", cwd=target)
    assert result.returncode == 0  # a warning alone does not fail the lint
    (record,) = json.loads(result.stdout)
    assert record["code"] == "section_duplicate"
    assert record["severity"] == "warning"
    assert (record["path"], record["line"], record["column"]) == ("twice.prose.md", 10, 1)
    assert set(record) == {
        "code",
        "severity",
        "message",
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
    }


def test_github_format(run_prosec: Runner) -> None:
    target = INVALID / "section_unknown"
    result = run_prosec("lint", "--format", "github", ".", cwd=target)
    assert result.returncode == 0
    assert result.stdout.startswith(
        "::notice file=colophon.prose.md,line=10,col=1,endLine=10,endColumn=13,"
        "title=section_unknown::"
    )


def test_strict_turns_id_missing_into_an_error(run_prosec: Runner) -> None:
    target = INVALID / "id_missing"
    assert run_prosec("lint", target).returncode == 0
    assert run_prosec("lint", "--strict", target).returncode == 1


def test_select_and_ignore(run_prosec: Runner) -> None:
    target = INVALID / "kind_retired"
    ignored = run_prosec("lint", "--ignore", "kind_retired", "--format", "json", target)
    assert (ignored.returncode, json.loads(ignored.stdout)) == (0, [])
    selected = run_prosec("lint", "--select", "kind_*", "--format", "json", target)
    assert [r["code"] for r in json.loads(selected.stdout)] == ["kind_retired"]
    unknown = run_prosec("lint", "--select", "no_such_code", target)
    assert unknown.returncode == 2


def test_unreadable_file_is_a_diagnostic_not_a_crash(run_prosec: Runner) -> None:
    result = run_prosec("lint", "--format", "json", INVALID / "file_unreadable")
    assert result.returncode == 1
    assert [r["code"] for r in json.loads(result.stdout)] == ["file_unreadable"]


def test_sarif_structure(run_prosec: Runner) -> None:
    # every example but the invalid prose.toml, which stops any command with exit 2
    result = run_prosec(
        "lint", "--format", "sarif", INVALID, "--exclude", INVALID / "config_invalid"
    )
    assert result.returncode == 1
    _assert_sarif(json.loads(result.stdout))


def _assert_sarif(log: dict[str, Any]) -> None:
    """The parts of SARIF 2.1.0 that code-scanning consumers require, checked by hand."""
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "prosec"
    rules = driver["rules"]
    assert [r["id"] for r in rules] == sorted(CODES)
    for rule in rules:
        assert rule["shortDescription"]["text"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    assert run["results"], "the invalid corpus must produce results"
    for res in run["results"]:
        assert res["ruleId"] in CODES
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] in ("error", "warning", "note")
        assert isinstance(res["message"]["text"], str) and res["message"]["text"]
        (location,) = res["locations"]
        physical = location["physicalLocation"]
        assert not physical["artifactLocation"]["uri"].startswith("/")
        region = physical["region"]
        assert 1 <= region["startLine"] <= region["endLine"]
        assert region["startColumn"] >= 1 and region["endColumn"] >= 1


def test_responsibility_ids_are_distinct_across_the_corpus() -> None:
    ids = [
        line.partition(":")[2].strip()
        for program in programs()
        for source in sorted((program / "src").glob("*.prose.md"))
        for line in source.read_text(encoding="utf-8").splitlines()[:8]
        if line.startswith("id:")
    ]
    assert len(ids) >= 25
    assert len(ids) == len(set(ids))
