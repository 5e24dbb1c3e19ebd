"""Lint rules: small modules, each yielding diagnostics for one family of checks."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

from .. import prosescript, runtime_hints
from ..diagnostics import Diagnostic
from ..ir import Contract, Project, SourceFile
from . import declarations, identity, sections
from .context import RuleContext

__all__ = ["RuleContext", "RuleMemo", "run"]

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


class RuleMemo:
    """The contract rules' findings per file, kept between runs (the language server).

    A contract rule reads its contract, its file, and of the rest of the project only
    what `prosescript.scope.file_key` sums up (the call targets of the file's directory);
    so a file whose source and key are unchanged has the findings it had. A rule that
    starts reading more of the project must add it to that key."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[SourceFile, object, tuple[Diagnostic, ...]]] = {}

    def findings(self, project: Project, source: SourceFile) -> tuple[Diagnostic, ...]:
        key = prosescript.file_key(project, source)
        kept = self._kept.get(source.path)
        if kept is not None and (kept[0] is source or kept[0] == source) and kept[1] == key:
            return kept[2]
        found = tuple(_contract_findings(project, source))
        self._kept[source.path] = (source, key, found)
        return found

    def retain(self, paths: Collection[str]) -> None:
        """Drop what is kept for files no longer in any project."""
        for path in self._kept.keys() - set(paths):
            del self._kept[path]


def run(
    project: Project, focus: Collection[str] | None = None, memo: RuleMemo | None = None
) -> list[Diagnostic]:
    """Every rule over every contract (of the `focus` files only, when given: the rest of
    the project is context whose own findings nobody asked for; never of the files loaded
    from deps/), then the project-wide rules. With a `memo`, an unchanged file's contract
    findings are those of the last run."""
    found: list[Diagnostic] = []
    for source in project.files:
        if focus is not None and source.path not in focus:
            continue
        if source.dependency is not None:  # a file of deps/: its author's to lint
            continue
        if memo is not None:
            found.extend(memo.findings(project, source))
        else:
            found.extend(_contract_findings(project, source))
    for project_rule in PROJECT_RULES:
        found.extend(project_rule(project))
    return found


def _contract_findings(project: Project, source: SourceFile) -> Iterable[Diagnostic]:
    context = RuleContext(project=project, source=source)
    for contract in source.contracts:
        for rule in CONTRACT_RULES:
            yield from rule(contract, context)
