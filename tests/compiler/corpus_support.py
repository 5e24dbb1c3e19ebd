"""Helpers shared by the corpus tests: lint a directory in-process, list the programs."""

from __future__ import annotations

from pathlib import Path

from prosec.compiler.config import Config
from prosec.compiler.diagnostics import Diagnostic
from prosec.compiler.discover import discover
from prosec.compiler.lint import lint_refs

from ..conftest import CORPUS

INVALID = CORPUS / "invalid"

# codes only `prosec build` reports (wiring, patterns, lowering, host lookups); their
# examples are checked by building them (test_build_invalid_corpus.py), not by linting
BUILD_CODES = (
    "wiring_ambiguous",
    "wiring_unsatisfied",
    "wiring_mentioned",
    "wiring_self",
    "wiring_cycle",
    "emits_unknown",
    "pin_stale",
    "facet_not_emitted",
    "pattern_unknown",
    "pattern_slot_unbound",
    "pattern_slot_unknown",
    "pattern_config_unknown",
    "clause_unlowered",
    "structured_backing_missing",
    "canonicalizer_invalid",
)
HOST_CODES = ("tool_unresolved", "skill_unresolved")
# codes only the language server reports (every command exits 2 instead); their examples
# are checked through the workspace model (tests/compiler/lsp/test_workspace.py)
SERVER_CODES = ("config_invalid", "file_too_large")


def lint_dir(directory: Path, config: Config | None = None) -> tuple[Diagnostic, ...]:
    """Every diagnostic of the `.prose.md` files under `directory`, as `prosec lint` reports."""
    refs = discover([directory], directory)
    return lint_refs(refs, config or Config()).diagnostics


def programs() -> list[Path]:
    """Our own corpus programs: every directory of corpus/ except invalid/."""
    return sorted(p for p in CORPUS.iterdir() if p.is_dir() and p.name != "invalid")


def invalid_examples() -> list[Path]:
    """The examples `prosec lint` must report (build-only codes are checked by building)."""
    build_only = {*BUILD_CODES, *HOST_CODES, *SERVER_CODES}
    return sorted(p for p in INVALID.iterdir() if p.is_dir() and p.name not in build_only)
