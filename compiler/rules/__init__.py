"""Lint rules: small modules, each yielding diagnostics for one family of checks."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable
from typing import Protocol

from .. import prosescript, runtime_hints
from ..diagnostics import Diagnostic
from ..discover import text_digest
from ..ir import Contract, Project, SourceFile
from . import declarations, identity, sections
from .context import RuleContext

__all__ = ["CheckMemo", "RuleContext", "RuleMemo", "file_key", "run"]

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


class CheckMemo(Protocol):
    """The contract rules' findings of each file, by `file_key` (the build cache keeps them)."""

    def get(self, path: str, key: str) -> tuple[Diagnostic, ...] | None: ...

    def put(self, path: str, key: str, found: tuple[Diagnostic, ...]) -> None: ...


class RuleMemo:
    """A `CheckMemo` in memory (the language server): each file's findings under the key
    they were found with, for as long as the file is part of the project."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[str, tuple[Diagnostic, ...]]] = {}

    def get(self, path: str, key: str) -> tuple[Diagnostic, ...] | None:
        kept = self._kept.get(path)
        return kept[1] if kept is not None and kept[0] == key else None

    def put(self, path: str, key: str, found: tuple[Diagnostic, ...]) -> None:
        self._kept[path] = (key, found)

    def retain(self, paths: Collection[str]) -> None:
        """Drop what is kept for files no longer in the project."""
        for path in self._kept.keys() - set(paths):
            del self._kept[path]


def run(
    project: Project, focus: Collection[str] | None = None, memo: CheckMemo | None = None
) -> list[Diagnostic]:
    """Every rule over every contract (of the `focus` files only, when given: the rest of
    the project is context whose own findings nobody asked for; never of the files loaded
    from deps/), then the project-wide rules. With `memo`, a file whose `file_key` is the
    one its findings were kept under is not checked again."""
    found: list[Diagnostic] = []
    contexts: dict[str, str] = {}  # directory → digest of what its files may call
    for source in project.files:
        if focus is not None and source.path not in focus:
            continue
        if source.dependency is not None:  # a file of deps/: its author's to lint
            continue
        key = "" if memo is None else file_key(project, source, contexts)
        if memo is not None:
            kept = memo.get(source.path, key)
            if kept is not None:
                found.extend(kept)
                continue
        context = RuleContext(project=project, source=source)
        own: list[Diagnostic] = []
        for contract in source.contracts:
            for rule in CONTRACT_RULES:
                own.extend(rule(contract, context))
        if memo is not None:
            memo.put(source.path, key, tuple(own))
        found.extend(own)
    for project_rule in PROJECT_RULES:
        found.extend(project_rule(project))
    return found


def file_key(project: Project, source: SourceFile, contexts: dict[str, str]) -> str:
    """What the contract rules' findings on `source` are a function of: its path and text,
    and the one thing they read beyond the file, the ProseScript call targets of its
    directory (`prosescript.scope.directory_digest`; `contexts` memoizes it)."""
    directory = source.path.rpartition("/")[0]
    context = contexts.get(directory)
    if context is None:
        context = contexts[directory] = prosescript.directory_digest(project, directory)
    text = text_digest(source.text)
    return hashlib.sha256(f"{source.path}\0{context}\0{text}".encode()).hexdigest()
