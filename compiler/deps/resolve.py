"""Disk-only resolution of one reference: an identifier → a file under deps/, a local path →
a file beside the referring one. No git, no network: what `prosec install` put on disk is
all there is, and a miss says what was looked for and what to run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .identifiers import (
    DEPS,
    Identifier,
    IdentifierError,
    file_candidates,
    is_dependency,
    local_candidates,
    parse,
)


@dataclass(frozen=True, slots=True)
class Found:
    """The file a reference names: its path and, for a file of a clone, its locator."""

    path: Path
    locator: str | None  # `host/owner/repo/path.prose.md`; None for a project file
    identifier: Identifier | None  # None for a local path


@dataclass(frozen=True, slots=True)
class Problem:
    """Why a reference resolves to nothing: a diagnostic code and its message."""

    code: str  # dependency_missing | dependency_unresolved
    message: str
    identifier: Identifier | None = None  # when the text parsed as one


def resolve(
    text: str,
    *,
    root: Path,
    referrer: Path,
    referrer_locator: str | None = None,
    locked: Mapping[str, str] | None = None,
) -> Found | Problem:
    """What `text`, written in the file `referrer`, names on disk. A dependency resolves
    under `root/deps/`; a local path beside `referrer` (inside its own clone, for a file
    that is itself a dependency's)."""
    if is_dependency(text) or not _local(text):
        return _dependency(text, root, locked or {})
    return _local_file(text, root, referrer, referrer_locator)


def _local(text: str) -> bool:
    stripped = text.strip()
    return stripped.startswith(("./", "../")) or "/" not in stripped


def _dependency(text: str, root: Path, locked: Mapping[str, str]) -> Found | Problem:
    try:
        identifier = parse(text)
    except IdentifierError as exc:
        return Problem("dependency_unresolved", f"`{text.strip()}` cannot be resolved: {exc}")
    clone = root / DEPS / identifier.repo_key
    looked = [f"{DEPS}/{identifier.locator(c)}" for c in identifier.candidates()]
    if not clone.is_dir():
        pinned = locked.get(identifier.repo_key)
        why = (
            f"prose.lock pins {identifier.repo_key} at {pinned[:12]} but {DEPS}/"
            f"{identifier.repo_key}/ is missing"
            if pinned
            else f"{DEPS}/{identifier.repo_key}/ does not exist"
        )
        return Problem(
            "dependency_missing",
            f"dependency `{text.strip()}` is not installed: looked for {looked[0]}, and {why}; "
            "run `prosec install`",
            identifier,
        )
    base = clone.resolve()
    for candidate in identifier.candidates():
        path = clone / candidate
        if path.is_file() and _inside(path, base):
            return Found(path=path, locator=identifier.locator(candidate), identifier=identifier)
    return Problem(
        "dependency_unresolved",
        f"`{text.strip()}` names no file of {identifier.repo_key}: {_nor(looked)}; check the "
        "path, or run `prosec install` if prose.lock moved",
        identifier,
    )


def _local_file(
    text: str, root: Path, referrer: Path, referrer_locator: str | None
) -> Found | Problem:
    directory = referrer.parent
    candidates = local_candidates(text, PurePosixPath("."))
    if referrer_locator is not None:
        repo_key = "/".join(referrer_locator.split("/")[:3])
        clone = (root / DEPS / repo_key).resolve()
        for candidate in candidates:
            path = directory / candidate
            if path.is_file() and _inside(path, clone):
                relative = path.resolve().relative_to(clone).as_posix()
                return Found(path=path, locator=f"{repo_key}/{relative}", identifier=None)
    else:
        for candidate in candidates:
            path = directory / candidate
            if path.is_file():
                return Found(path=path, locator=None, identifier=None)
    shown = [_shown(directory / c, root) for c in candidates]
    return Problem(
        "dependency_unresolved",
        f"`{text.strip()}` names no file: {_nor(shown)}",
    )


def expected(text: str) -> tuple[str, ...]:
    """The deps/ files an identifier may name, root-relative (empty when it is none)."""
    try:
        identifier = parse(text)
    except IdentifierError:
        return ()
    return tuple(f"{DEPS}/{identifier.locator(c)}" for c in file_candidates(identifier.path))


def _nor(paths: list[str]) -> str:
    if len(paths) == 1:
        return f"{paths[0]} does not exist"
    return f"neither {paths[0]} nor {paths[1]} exists"


def _inside(path: Path, base: Path) -> bool:
    """The file, symlinks followed, is inside `base` (a clone cannot point elsewhere)."""
    try:
        return path.resolve().is_relative_to(base)
    except (OSError, RuntimeError):
        return False


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (OSError, ValueError):
        return path.as_posix()
