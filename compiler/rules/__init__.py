"""Lint rules: small modules, each yielding diagnostics for one family of checks."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

from .. import prosescript, runtime_hints
from ..diagnostics import Diagnostic
from ..ir import Contract, Project
from . import declarations, identity, sections
from .context import RuleContext

__all__ = ["RuleContext", "run"]

ContractRule = Callable[[Contract, RuleContext], Iterable[Diagnostic]]
ProjectRule = Callable[[Project], Iterable[Diagnostic]]

# The rule chain, in reporting order; each entry is switchable by its codes in prose.toml.
CONTRACT_RULES: tuple[ContractRule, ...] = (
    identity.check,
    sections.check,
    declarations.check,
    prosescript.check,
    lambda contract, _context: runtime_hints.check(contract),
)
PROJECT_RULES: tuple[ProjectRule, ...] = (identity.check_project,)


def run(project: Project, focus: Collection[str] | None = None) -> list[Diagnostic]:
    """Every rule over every contract (of the `focus` files only, when given: the rest of
    the project is context whose own findings nobody asked for; never of the files loaded
    from deps/), then the project-wide rules."""
    found: list[Diagnostic] = []
    for source in project.files:
        if focus is not None and source.path not in focus:
            continue
        if source.dependency is not None:  # a file of deps/: its author's to lint
            continue
        context = RuleContext(project=project, source=source)
        for contract in source.contracts:
            for rule in CONTRACT_RULES:
                found.extend(rule(contract, context))
    for project_rule in PROJECT_RULES:
        found.extend(project_rule(project))
    return found
