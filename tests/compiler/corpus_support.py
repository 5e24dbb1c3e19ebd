"""Helpers shared by the corpus tests: lint a directory in-process, list the programs."""

from __future__ import annotations

from pathlib import Path

from prosec.compiler.config import Config
from prosec.compiler.diagnostics import Diagnostic
from prosec.compiler.discover import discover
from prosec.compiler.lint import lint_refs

from ..conftest import CORPUS

INVALID = CORPUS / "invalid"


def lint_dir(directory: Path, config: Config | None = None) -> tuple[Diagnostic, ...]:
    """Every diagnostic of the `.prose.md` files under `directory`, as `prosec lint` reports."""
    refs = discover([directory], directory)
    return lint_refs(refs, config or Config()).diagnostics


def programs() -> list[Path]:
    """Our own corpus programs: every directory of corpus/ except invalid/."""
    return sorted(p for p in CORPUS.iterdir() if p.is_dir() and p.name != "invalid")


def invalid_examples() -> list[Path]:
    return sorted(p for p in INVALID.iterdir() if p.is_dir())
