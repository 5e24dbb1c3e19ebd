"""`prosec preflight`: is a program ready to run? Every reference resolves, every
dependency is installed at the commit prose.lock pins with an untouched working tree, and
every `### Environment` variable is set. Values of variables are never read beyond
their presence."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..ir import Contract, Project
from .git import Git, GitError, is_clone
from .identifiers import DEPS
from .install import describe_changes
from .load import Loaded
from .lock import Lock

_NAME = re.compile(r"`?([A-Za-z_][A-Za-z0-9_]*)`?")


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the report: passed or not, what was checked, and what was found."""

    ok: bool
    kind: str  # "reference" | "dependency" | "environment"
    subject: str
    detail: str = ""

    def line(self) -> str:
        verdict = "pass" if self.ok else "fail"
        return f"{verdict}  {self.kind} {self.subject}" + (
            f": {self.detail}" if self.detail else ""
        )


def preflight(
    root: Path,
    loaded: Loaded,
    lock: Lock | None,
    git: Git,
    environ: Mapping[str, str],
) -> list[Check]:
    checks = list(_references(loaded))
    checks += _dependencies(root, loaded, lock, git)
    checks += _environment(loaded.project, environ)
    return checks


def _references(loaded: Loaded) -> Iterator[Check]:
    """References that name nothing (a missing clone is reported once, per repository)."""
    for ref in loaded.references:
        problem = ref.problem
        if problem is None or problem.code == "dependency_missing":
            continue
        span = ref.reference.span
        yield Check(False, "reference", f"{span.path}:{span.line}", problem.message)


def _dependencies(root: Path, loaded: Loaded, lock: Lock | None, git: Git) -> Iterator[Check]:
    repos = sorted({r.identifier.repo_key for r in loaded.references if r.identifier})
    pinned = dict(lock.entries) if lock is not None else {}
    for repo in repos:
        directory = root / DEPS / repo
        sha = pinned.get(repo)
        if sha is None:
            yield Check(False, "dependency", repo, "not in prose.lock; run `prosec install`")
            continue
        if not directory.is_dir():
            yield Check(
                False,
                "dependency",
                repo,
                f"not installed ({DEPS}/{repo}/ is missing); run `prosec install`",
            )
            continue
        if not is_clone(directory):
            yield Check(False, "dependency", repo, f"{DEPS}/{repo} is not a git clone")
            continue
        yield _checkout(repo, directory, sha, git)


def _checkout(repo: str, directory: Path, sha: str, git: Git) -> Check:
    try:
        head = git.commit(directory, "HEAD")
        changes = git.changes(directory)
    except GitError as exc:
        return Check(False, "dependency", repo, str(exc))
    if head != sha:
        at = head[:12] if head else "no commit"
        return Check(
            False,
            "dependency",
            repo,
            f"{DEPS}/{repo} is at {at}, prose.lock pins {sha[:12]}; run `prosec install`",
        )
    if changes:
        return Check(False, "dependency", repo, f"{DEPS}/{repo} {describe_changes(changes)}")
    return Check(True, "dependency", repo, f"at {sha[:12]}")


def _environment(project: Project, environ: Mapping[str, str]) -> Iterator[Check]:
    """Each declared variable once, with the first contract that declares it."""
    seen: set[str] = set()
    for contract in project.contracts:
        for name, optional, line in _declared(contract):
            if name in seen:
                continue
            seen.add(name)
            where = f"declared by {contract.name}, {contract.path}:{line}"
            if name in environ:  # presence only: the value is never looked at
                yield Check(True, "environment", name, "set")
            elif optional:
                yield Check(True, "environment", name, f"not set, optional ({where})")
            else:
                yield Check(False, "environment", name, f"not set ({where})")


def _declared(contract: Contract) -> Iterator[tuple[str, bool, int]]:
    """(variable, optional, line) for each `### Environment` item."""
    for section in contract.sections_named("environment"):
        for item in section.body.items:
            match = _NAME.match(item.name or item.text.strip())
            if match:
                optional = "optional" in item.text.lower()
                yield match.group(1), optional, item.span.line
