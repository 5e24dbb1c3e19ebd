"""The 255 upstream programs: `prosec lint --format json` never fails internally."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from prosec.compiler.diagnostics import CODES

from ..conftest import prosec_bin

pytestmark = pytest.mark.conformance

RETIRED_KIND_FILES = {
    "tests/open-prose/responsibility-runtime/stargazer-outreach/index.prose.md",
    "tests/open-prose/responsibility-runtime/stargazer-outreach/outreach-drafter.prose.md",
    "tests/open-prose/responsibility-runtime/stargazer-outreach/profile-enricher.prose.md",
    "tests/open-prose/responsibility-runtime/stargazer-outreach/program-proposer.prose.md",
    "tests/open-prose/responsibility-runtime/stargazer-outreach/sample-runner.prose.md",
    "tests/open-prose/responsibility-runtime/stargazer-outreach/stargazer-fetcher.prose.md",
}
WITHOUT_MAINTAINS = "tests/open-prose/responsibility-runtime/01-stargazer-responsibility.prose.md"


@pytest.fixture(scope="module")
def records(upstream: Path) -> list[dict[str, Any]]:
    # module-scoped, so the whole corpus is linted once by the real console script
    result = subprocess.run(
        [prosec_bin(), "lint", "--format", "json", "."],
        cwd=upstream,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1, result.stderr  # the retired kinds are errors
    assert result.stderr == ""
    parsed: list[dict[str, Any]] = json.loads(result.stdout)
    return parsed


def test_corpus_is_complete(upstream: Path) -> None:
    assert len(list(upstream.rglob("*.prose.md"))) == 255


def test_no_internal_error(records: list[dict[str, Any]]) -> None:
    assert [r for r in records if r["code"] == "internal_error"] == []


def test_retired_kinds_are_errors(records: list[dict[str, Any]]) -> None:
    retired = {r["path"] for r in records if r["code"] == "kind_retired"}
    assert retired == RETIRED_KIND_FILES
    assert {r["severity"] for r in records if r["code"] == "kind_retired"} == {"error"}


def test_file_without_maintains_is_an_error(records: list[dict[str, Any]]) -> None:
    hits = [
        r for r in records if r["code"] == "maintains_missing" and r["path"] == WITHOUT_MAINTAINS
    ]
    assert [r["severity"] for r in hits] == ["error"]


def test_every_record_points_into_its_file(upstream: Path, records: list[dict[str, Any]]) -> None:
    for record in records:
        lines = (upstream / record["path"]).read_text(encoding="utf-8").split("\n")
        assert 1 <= record["line"] <= record["end_line"] <= len(lines), record
        assert 1 <= record["column"] <= len(lines[record["line"] - 1]) + 1, record


def test_every_code_is_registered(records: list[dict[str, Any]]) -> None:
    counts = Counter(r["code"] for r in records)
    print("\nupstream diagnostics per code:")  # shown with `pytest -s`
    for code, count in sorted(counts.items()):
        print(f"  {code}: {count}")
    assert set(counts) <= set(CODES)
    for record in records:
        assert record["severity"] == CODES[record["code"]].severity.value, record
