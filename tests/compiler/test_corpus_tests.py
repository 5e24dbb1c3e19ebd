"""Every corpus program with a public responsibility or function has a test contract; every
corpus test plans without a diagnostic; the programs with renders pass their tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from prosec.compiler.test_suite import find_tests, plan_suite

from ..conftest import CORPUS, Runner

# kitchen-lib is published at a pinned commit (menu-board's prose.lock): a new file would
# move it; menu-board needs that dependency installed; wiring-cycle does not compile
WITHOUT = {"invalid", "kitchen-lib", "menu-board", "wiring-cycle"}
# the tests that fail on purpose, by program (newsroom's front-page order, explained in it)
FAILING_ON_PURPOSE = {"newsroom": 1}
# the programs known to bind renders: discovery must find at least these
KNOWN_RUNNABLE = {
    "bike-share",
    "choir-rehearsals",
    "lighthouse-watch",
    "museum-loans",
    "newsroom",
    "tea-timer",
    "tide-tables",
    "trail-conditions",
    "weather-alerts",
    "wiring-facets",
    "wiring-fan-in",
    "wiring-gateways",
    "wiring-named-truth",
    "wiring-self-driven",
    "wiring-template",
}


def programs() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if p.is_dir() and p.name not in WITHOUT)


def _has_public_contract(program: Path) -> bool:
    for path in program.rglob("*.prose.md"):
        head = path.read_text(encoding="utf-8")[:400]
        if "\nkind: responsibility" in head or "\nkind: function" in head:
            return True
    return False


@pytest.mark.parametrize("program", programs(), ids=lambda p: p.name)
def test_every_program_has_a_test_contract_that_plans_cleanly(program: Path) -> None:
    assert _has_public_contract(program)
    tests = find_tests([program], recursive=True)
    assert tests, f"{program.name} has no `kind: test` contract"
    suite = plan_suite(tests, base=CORPUS)
    assert suite.diagnostics == []
    assert suite.tests and all(t.subject for t in suite.tests)


def runnable() -> list[str]:
    """Every program (with test contracts) whose prose.toml binds a render."""
    found = []
    for program in programs():
        toml = program / "prose.toml"
        binds = toml.is_file() and "\n[render." in "\n" + toml.read_text(encoding="utf-8")
        if binds and find_tests([program], recursive=True):
            found.append(program.name)
    return found


def test_the_programs_that_bind_renders_are_found() -> None:
    assert set(runnable()) >= KNOWN_RUNNABLE


@pytest.mark.parametrize("program", runnable(), ids=str)
def test_programs_with_renders_pass_their_tests(
    program: str, tmp_path: Path, run_prosec: Runner
) -> None:
    # the real `prosec test`, with real subprocess renders, on a copy of the program
    root = tmp_path / program
    shutil.copytree(CORPUS / program, root, ignore=shutil.ignore_patterns("dist", "runs", "state"))
    failed = FAILING_ON_PURPOSE.get(program, 0)
    passed = len(find_tests([root], recursive=True)) - failed
    result = run_prosec("test", ".", "--recursive", "--out", tmp_path / "out", cwd=root)
    assert result.returncode == (1 if failed else 0), result.stdout + result.stderr
    assert result.stdout.startswith(f"Results: {passed} passed, {failed} failed, 0 errors\n")
