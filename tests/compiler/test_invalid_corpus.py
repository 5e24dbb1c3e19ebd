"""corpus/invalid/<code>/: each minimal program produces exactly its own diagnostic code."""

from __future__ import annotations

from pathlib import Path

import pytest
from prosec.compiler.diagnostics import CODES

from .corpus_support import INVALID, invalid_examples, lint_dir


@pytest.mark.parametrize("example", invalid_examples(), ids=lambda p: p.name)
def test_example_reports_exactly_its_code(example: Path) -> None:
    found = lint_dir(example)
    assert {d.code for d in found} == {example.name}


@pytest.mark.parametrize("example", invalid_examples(), ids=lambda p: p.name)
def test_example_names_a_registered_code(example: Path) -> None:
    assert example.name in CODES


def test_every_code_has_an_example() -> None:
    # internal_error is a prosec bug by definition, so it cannot have a failing example
    missing = sorted(set(CODES) - {"internal_error"} - {p.name for p in INVALID.iterdir()})
    assert missing == [], f"add corpus/invalid/<code>/ examples for: {', '.join(missing)}"


@pytest.mark.parametrize("example", invalid_examples(), ids=lambda p: p.name)
def test_example_spans_point_into_the_file(example: Path) -> None:
    for diagnostic in lint_dir(example):
        span = diagnostic.span
        path = example / span.path
        assert path.is_file(), span.path
        line_count = max(len(path.read_bytes().split(b"\n")), 1)
        assert 1 <= span.line <= span.end_line <= line_count
