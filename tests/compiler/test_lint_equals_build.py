"""`prosec lint` reports what `prosec build` reports, for every corpus and upstream program.

Both run the one pass tuple of compiler/pipeline.py: lint asks for its analysis slice
(checks, patterns, Forme, lowering), so the findings agree by construction; this property
checks it over every program we have. Build-only findings (an empty project, host
lookups, an emitted intent that fails validation) are left out, and build runs with
`--offline-tools`, as lint has no host.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from prosec.compiler import config
from prosec.compiler.config import Config
from prosec.compiler.diagnostics import Diagnostic
from prosec.compiler.discover import discover
from prosec.compiler.lint import lint_refs
from prosec.compiler.pipeline import compile_project

from ..conftest import UPSTREAM
from .corpus_support import BUILD_ONLY_CODES, HOST_CODES, INVALID, SERVER_CODES, programs
from .upstream_support import upstream_programs

Finding = tuple[Path, int, int, str, str, str]


def _findings(diagnostics: tuple[Diagnostic, ...], base: Path) -> set[Finding]:
    return {
        (
            (base / d.span.path).resolve(),
            d.span.line,
            d.span.column,
            d.code,
            d.severity.value,
            d.message,
        )
        for d in diagnostics
        if d.code not in BUILD_ONLY_CODES
    }


def built(root: Path) -> set[Finding]:
    result = compile_project(root, config.load(root).with_overrides(offline_tools=True))
    problems = result.unit.problems
    assert not problems, problems  # an intent that fails its own validation is a bug
    return _findings(result.diagnostics, root)


def linted(paths: list[Path], base: Path) -> set[Finding]:
    refs = discover(paths, base, legacy=True)  # as `prosec lint` walks: `.prose` too
    return _findings(lint_refs(refs, Config(), base=base, configs=config.load).diagnostics, base)


def corpus_roots() -> list[Path]:
    skipped = {*BUILD_ONLY_CODES, *HOST_CODES, *SERVER_CODES}
    examples = sorted(p for p in INVALID.iterdir() if p.is_dir() and p.name not in skipped)
    return [*programs(), *examples]


@pytest.mark.parametrize(
    "root", corpus_roots(), ids=lambda p: p.relative_to(p.parents[1]).as_posix()
)
def test_lint_of_a_corpus_program_equals_its_build(root: Path) -> None:
    assert linted([root], root) == built(root)


@pytest.mark.parametrize("root", programs(), ids=lambda p: p.name)
def test_lint_of_one_file_reports_its_part_of_the_build(root: Path) -> None:
    """One file named: the rest of its project is read for context, and only its own
    findings are reported."""
    build = built(root)
    for source in sorted((root / "src").glob("*.prose.md")):
        own = {f for f in build if f[0] == source.resolve()}
        assert linted([source], root) == own, source.name


@pytest.mark.conformance
@pytest.mark.parametrize(
    "program",
    upstream_programs(),
    ids=lambda p: p.relative_to(UPSTREAM).as_posix() if p.is_absolute() else str(p),
)
def test_lint_of_an_upstream_program_equals_its_build(program: Path) -> None:
    if program.is_dir():
        assert linted([program], program) == built(program)
        return
    # one library file: its findings in the build of its directory, the project lint reads
    build = built(program.parent)
    own = {f for f in build if f[0] == program.resolve()}
    assert linted([program], program.parent) == own
