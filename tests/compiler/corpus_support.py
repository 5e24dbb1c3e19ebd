"""Helpers shared by the corpus tests: lint a directory in-process, list the programs."""

from __future__ import annotations

from pathlib import Path

from prosec.compiler import config as config_mod
from prosec.compiler.config import Config
from prosec.compiler.diagnostics import Diagnostic
from prosec.compiler.discover import discover
from prosec.compiler.lint import lint_refs

from ..conftest import CORPUS

INVALID = CORPUS / "invalid"

# codes of the build's passes beyond the rule chain (wiring, patterns, lowering): `prosec
# lint` reports them too, and their examples are also built (test_build_invalid_corpus.py)
BUILD_CODES = (
    "wiring_ambiguous",
    "wiring_unsatisfied",
    "wiring_mentioned",
    "wiring_self",
    "wiring_cycle",
    "emits_unknown",
    "pin_stale",
    "facet_not_emitted",
    "template_unexpanded",
    "pattern_unknown",
    "pattern_slot_unbound",
    "pattern_slot_unknown",
    "pattern_config_unknown",
    "clause_unlowered",
    "structured_backing_missing",
    "canonicalizer_invalid",
)
# the Forme codes among them: what `--select`/`--ignore` must reach like any other code
WIRING_CODES = tuple(
    code
    for code in BUILD_CODES
    if not code.startswith(("pattern_", "clause_", "structured_", "canonicalizer_"))
)
HOST_CODES = ("tool_unresolved", "skill_unresolved")
# codes only `prosec build` reports: an empty project touches no file lint could name
BUILD_ONLY_CODES = ("sources_empty",)
# codes only the language server reports (every command exits 2 instead); their examples
# are checked through the workspace model (tests/compiler/lsp/test_workspace.py)
SERVER_CODES = ("config_invalid", "file_too_large")


def lint_dir(directory: Path, config: Config | None = None) -> tuple[Diagnostic, ...]:
    """Every diagnostic of the `.prose.md` files under `directory`, as `prosec lint` reports
    (each project with its own prose.toml unless `config` is given)."""
    refs = discover([directory], directory, legacy=True)
    configs = None if config is not None else config_mod.load
    return lint_refs(refs, config or Config(), base=directory, configs=configs).diagnostics


# scenario programs that exist to show a diagnostic, with the codes `prosec build` and
# `prosec lint` must both report for them
EXPECTED_CODES = {
    "wiring-cycle": {"wiring_cycle"},
    "wiring-unsatisfied": {"wiring_unsatisfied"},
    "wiring-self-driven": {"wiring_self"},
    "wiring-truth-ambiguous": {"wiring_ambiguous"},
    "allotment-plots": {"section_unknown"},
    # its dependency is installed by tests/compiler/deps/test_corpus_program.py; here it
    # shows what a program whose deps/ was never filled reports
    "menu-board": {"dependency_missing"},
}


def programs() -> list[Path]:
    """Our own corpus programs: every directory of corpus/ except invalid/."""
    return sorted(p for p in CORPUS.iterdir() if p.is_dir() and p.name != "invalid")


def invalid_examples() -> list[Path]:
    """The examples `prosec lint` must report (build-only codes are checked by building)."""
    build_only = {*BUILD_ONLY_CODES, *HOST_CODES, *SERVER_CODES}
    return sorted(p for p in INVALID.iterdir() if p.is_dir() and p.name not in build_only)
