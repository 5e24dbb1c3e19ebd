"""`prosec install`: clone what the sources reference into deps/, check each clone out at
its chosen commit, rescan until nothing new appears, and write prose.lock.

The commit of a repository is, in order: the versions its references pin (`@sha`, `@tag`;
when they disagree, the newer commit wins with a warning, unless prose.lock already chose
one of them); with `--update`, the head of its default branch; its prose.lock entry; the
head of its default branch. `--frozen` installs and fails when prose.lock would change.
Only the files the project reaches are scanned, so a repository's unrelated programs add
no dependencies.
"""

from __future__ import annotations

import secrets
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ..ir import Project
from .git import Git, GitError, default_head, is_clone
from .identifiers import DEPS, clone_url
from .load import Loaded, Reference
from .lock import Lock, read_lock, write_lock

MAX_ROUNDS = 64  # rescans before giving up (each one clones or moves something)
PROJECT = "this project"


class InstallError(Exception):
    """Install cannot finish: a clone, a checkout, a cycle, local changes, a frozen lock."""


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallOptions:
    update: bool = False
    frozen: bool = False
    urls: Mapping[str, str] = field(default_factory=dict)  # `[deps]` of prose.toml


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallReport:
    lock: Lock
    written: bool  # prose.lock changed on disk
    cloned: tuple[str, ...]
    moved: tuple[tuple[str, str, str], ...]  # (repo, from sha, to sha) checkouts
    dropped: tuple[str, ...]  # lock entries no source needs any more
    warnings: tuple[str, ...]


@dataclass(slots=True)
class _Session:
    root: Path
    git: Git
    options: InstallOptions
    locked: Mapping[str, str]
    log: Callable[[str], None]
    cloned: list[str] = field(default_factory=list)
    moved: list[tuple[str, str, str]] = field(default_factory=list)
    warnings: dict[str, str] = field(default_factory=dict)  # by repo: the latest word
    fetched: set[str] = field(default_factory=set)
    heads: dict[str, str] = field(default_factory=dict)

    def clone_dir(self, repo: str) -> Path:
        return self.root / DEPS / repo


def install(
    root: Path,
    project: Project,
    load: Callable[[Project], Loaded],
    git: Git,
    options: InstallOptions,
    log: Callable[[str], None],
) -> InstallReport:
    """Install every dependency `project` (the parsed sources) reaches; `load` resolves
    against deps/ as it is on disk at each call."""
    if options.update and options.frozen:
        raise InstallError("--update and --frozen contradict each other: choose one")
    previous = read_lock(root)
    session = _Session(
        root=root,
        git=git,
        options=options,
        locked=dict(previous.entries) if previous is not None else {},
        log=log,
    )
    chosen: dict[str, str] = {}
    for _ in range(MAX_ROUNDS):
        loaded = load(project)
        needs = _requirements(loaded.references)
        _check_cycles(loaded.references)
        changed = False
        for repo in sorted(needs):
            commit, fresh = _settle(session, repo, needs[repo])
            changed = changed or fresh or chosen.get(repo) != commit
            chosen[repo] = commit
        if not changed:
            break
    else:
        raise InstallError(f"dependencies did not settle after {MAX_ROUNDS} rescans")
    _unresolved(loaded)
    lock = Lock(entries={repo: chosen[repo] for repo in sorted(needs)})
    dropped = tuple(sorted(set(session.locked) - set(lock.entries)))
    if options.frozen:
        _frozen(previous, lock)
        written = False
    else:
        written = write_lock(root, lock) if lock.entries or previous is not None else False
    return InstallReport(
        lock=lock,
        written=written,
        cloned=tuple(session.cloned),
        moved=tuple(session.moved),
        dropped=dropped,
        warnings=tuple(session.warnings[repo] for repo in sorted(session.warnings)),
    )


# -- what the sources ask for ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Need:
    requirer: str  # PROJECT (with the file and line) or the requiring repository
    version: str | None


def _requirements(references: Sequence[Reference]) -> dict[str, list[_Need]]:
    needs: dict[str, list[_Need]] = {}
    for ref in references:
        identifier = ref.identifier
        if identifier is None:
            continue
        requirer = _requirer(ref)
        if requirer == identifier.repo_key:
            continue  # a repository's files naming each other
        needs.setdefault(identifier.repo_key, []).append(_Need(requirer, identifier.version))
    return needs


def _requirer(ref: Reference) -> str:
    if ref.referrer is None:
        span = ref.reference.span
        return f"{PROJECT} ({span.path}:{span.line})"
    return "/".join(ref.referrer.split("/")[:3])


def _check_cycles(references: Sequence[Reference]) -> None:
    """Repositories requiring each other (A → B → A) cannot be ordered: an error."""
    graph: dict[str, set[str]] = {}
    for ref in references:
        if ref.referrer is None or ref.identifier is None:
            continue
        source = "/".join(ref.referrer.split("/")[:3])
        if source != ref.identifier.repo_key:
            graph.setdefault(source, set()).add(ref.identifier.repo_key)
    done: set[str] = set()
    for start in sorted(graph):
        cycle = _cycle_from(start, graph, done, [])
        if cycle is not None:
            raise InstallError(f"circular dependency: {' → '.join(cycle)}")


def _cycle_from(
    node: str, graph: Mapping[str, set[str]], done: set[str], path: list[str]
) -> list[str] | None:
    """A cycle reachable from `node` (depth first, in sorted order), as the path around it."""
    if node in path:
        return [*path[path.index(node) :], node]
    if node in done:
        return None
    path.append(node)
    for following in sorted(graph.get(node, ())):
        cycle = _cycle_from(following, graph, done, path)
        if cycle is not None:
            return cycle
    path.pop()
    done.add(node)
    return None


# -- one repository -------------------------------------------------------------------------


def _settle(session: _Session, repo: str, needs: list[_Need]) -> tuple[str, bool]:
    """Clone `repo` if needed, choose its commit, check it out; (commit, whether the
    working tree changed)."""
    directory = session.clone_dir(repo)
    fresh = False
    if not directory.exists():
        _clone(session, repo, directory)
        fresh = True
    elif not is_clone(directory):
        raise InstallError(
            f"{DEPS}/{repo} is not a git clone (a copy?): delete it and run `prosec install`"
        )
    commit = _choose(session, repo, directory, needs)
    head = session.git.commit(directory, "HEAD") if not fresh else None
    if not fresh:
        _require_clean(session, repo, directory)
    if head != commit:
        try:
            session.git.checkout(directory, commit)
        except GitError as exc:
            raise InstallError(f"{repo}: cannot check out {commit[:12]}: {exc}") from None
        if head is not None:
            session.moved.append((repo, head, commit))
            session.log(f"moved {repo} from {head[:12]} to {commit[:12]}")
        fresh = True
    return commit, fresh


def _clone(session: _Session, repo: str, directory: Path) -> None:
    url = clone_url(repo, session.options.urls, session.root)
    directory.parent.mkdir(parents=True, exist_ok=True)
    temporary = directory.with_name(f".{directory.name}.partial-{secrets.token_hex(4)}")
    session.log(f"cloning {repo} …")
    started = time.monotonic()
    try:
        session.git.clone(url, temporary)
        temporary.rename(directory)  # a clone appears whole or not at all
    except GitError as exc:
        raise InstallError(f"cannot clone {repo}: {exc}") from None
    finally:
        if temporary.exists():
            shutil.rmtree(temporary, ignore_errors=True)
    session.cloned.append(repo)
    session.log(f"cloned {repo} in {time.monotonic() - started:.2f} s")


def _choose(session: _Session, repo: str, directory: Path, needs: list[_Need]) -> str:
    pins = [need for need in needs if need.version is not None]
    if pins:
        return _pinned(session, repo, directory, pins)
    if session.options.update:
        return _head(session, repo, directory)
    locked = session.locked.get(repo)
    if locked is not None:
        if session.git.commit(directory, locked) is None:
            _fetch(session, repo, directory)
        if session.git.commit(directory, locked) is None:
            raise InstallError(
                f"prose.lock pins {repo} at {locked[:12]}, a commit its repository does not "
                "have (rewritten history?); run `prosec install --update` to move to its head"
            )
        return locked
    found = default_head(session.git, directory)
    if found is None:
        raise InstallError(f"{repo} has no commits to install")
    return found


def _pinned(session: _Session, repo: str, directory: Path, pins: list[_Need]) -> str:
    commits: dict[str, list[_Need]] = {}
    for need in pins:
        assert need.version is not None
        commit = session.git.commit(directory, need.version)
        if commit is None:
            _fetch(session, repo, directory)
            commit = session.git.commit(directory, need.version)
        if commit is None:
            raise InstallError(
                f"`@{need.version}` is neither a commit nor a tag of {repo} "
                f"(required by {need.requirer})"
            )
        commits.setdefault(commit, []).append(need)
    if len(commits) == 1:
        return next(iter(commits))
    locked = session.locked.get(repo)
    if locked in commits and not session.options.update:
        chosen, why = locked, "as prose.lock chooses"
    else:
        dated = {c: session.git.commit_time(directory, c) for c in commits}
        chosen = max(commits, key=lambda c: (dated[c], c))
        day = datetime.fromtimestamp(dated[chosen], UTC).date().isoformat()
        why = f"the newer, committed {day}"
    lines = [f"version conflict for {repo}:"]
    for commit in sorted(commits):
        for need in commits[commit]:
            lines.append(f"  {need.requirer} requires @{need.version} ({commit[:12]})")
    lines.append(
        f"  using {chosen[:12]} ({why}); check that it suits every requirer, and edit "
        "prose.lock to choose another"
    )
    session.warnings[repo] = "\n".join(lines)
    return chosen


def _head(session: _Session, repo: str, directory: Path) -> str:
    if repo not in session.heads:
        try:
            session.heads[repo] = session.git.remote_head(directory)
        except GitError as exc:
            raise InstallError(f"cannot update {repo}: {exc}") from None
        session.fetched.add(repo)
    return session.heads[repo]


def _fetch(session: _Session, repo: str, directory: Path) -> None:
    if repo in session.fetched:
        return
    session.log(f"fetching {repo} …")
    try:
        session.git.fetch(directory)
    except GitError as exc:
        raise InstallError(f"cannot fetch {repo}: {exc}") from None
    session.fetched.add(repo)


def _require_clean(session: _Session, repo: str, directory: Path) -> None:
    """A clone someone edited is never overwritten: install stops and says what differs."""
    try:
        changes = session.git.changes(directory)
    except GitError as exc:
        raise InstallError(f"{DEPS}/{repo}: {exc}") from None
    if changes:
        raise InstallError(
            f"{DEPS}/{repo} {describe_changes(changes)}; move them away or "
            f"delete {DEPS}/{repo}, then run `prosec install` again"
        )


def describe_changes(changes: Sequence[object]) -> str:
    """`has local changes (modified: a.prose.md, untracked: b.md)`, at most five named."""
    shown = ", ".join(
        f"{getattr(c, 'status', '?')}: {getattr(c, 'path', '?')}" for c in changes[:5]
    )
    more = f", and {len(changes) - 5} more" if len(changes) > 5 else ""
    return f"has local changes ({shown}{more})"


# -- the outcome --------------------------------------------------------------------------


def _unresolved(loaded: Loaded) -> None:
    """References that still name nothing once everything is cloned: typos, bad identifiers."""
    problems = [ref for ref in loaded.references if ref.problem is not None]
    if not problems:
        return
    lines = [
        f"{ref.reference.span.path}:{ref.reference.span.line}: {ref.problem.message}"
        for ref in problems
        if ref.problem is not None
    ]
    raise InstallError("\n".join(lines))


def _frozen(previous: Lock | None, lock: Lock) -> None:
    before = dict(previous.entries) if previous is not None else {}
    after = dict(lock.entries)
    if before == after:
        return
    lines = ["prose.lock would change (--frozen):"]
    for repo in sorted(set(before) | set(after)):
        old, new = before.get(repo), after.get(repo)
        if old == new:
            continue
        if old is None:
            lines.append(f"  + {repo} {new}")
        elif new is None:
            lines.append(f"  - {repo} {old}")
        else:
            lines.append(f"  ~ {repo} {old[:12]} → {new[:12]}")
    lines.append("run `prosec install` and commit prose.lock")
    raise InstallError("\n".join(lines))
