"""Source discovery: paths given on the command line → the `.prose.md` files to read."""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SUFFIX = ".prose.md"
LEGACY_SUFFIX = ".prose"  # a legacy standalone program (seed 000): `prosec lint` names it
# generated or vendored trees that never hold the project's own sources
SKIPPED_DIRS = frozenset(
    {"dist", "runs", "state", "deps", ".git", ".venv", "node_modules", ".prose"}
)


@dataclass(frozen=True, slots=True, order=True)
class SourceRef:
    """A discovered file: `display` is how diagnostics and artifacts name it."""

    display: str
    path: Path


class DiscoveryError(Exception):
    """A path the user named does not exist or is not a directory or `.prose.md` file."""


def source_stem(path: str) -> str:
    """A source's name without its `.prose.md` (or `.md`) suffix: `src/a.prose.md` → `a`."""
    name = path.rsplit("/", 1)[-1]
    for suffix in (SUFFIX, ".md"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def display_path(path: Path, base: Path) -> str:
    """Forward-slashed path relative to `base` when inside it, else the path as given."""
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def project_key(path: Path) -> Path:
    """The project a source belongs to: the nearest directory with `prose.toml` or
    `prose.lock`, else the parent of the nearest `src/`, else the file's own directory."""
    return _directory_project(path.resolve().parent)


class ProjectKeys:
    """`project_key` remembering each directory's answer, for one pass over many files
    (a long-lived caller makes a new one when project markers may have moved)."""

    def __init__(self) -> None:
        self._known: dict[str, Path] = {}

    def __call__(self, path: Path) -> Path:
        return self.of_resolved(str(path.resolve()))

    def of_resolved(self, resolved: str) -> Path:
        """The key of a file whose path is already resolved (as `project_sources` has it)."""
        directory = os.path.dirname(resolved)
        found = self._known.get(directory)
        if found is None:
            found = self._known[directory] = _directory_project(Path(directory))
        return found


def _directory_project(directory: Path) -> Path:
    for candidate in (directory, *directory.parents):
        if (candidate / "prose.toml").is_file() or (candidate / "prose.lock").is_file():
            return candidate
    for candidate in (directory, *directory.parents):
        if candidate.name == "src":
            return candidate.parent
    return directory


def project_sources(root: Path, base: Path) -> dict[str, SourceRef]:
    """The sources `project_key` puts in the project at `root` (a superset, to filter),
    by resolved path: its whole tree when `root` holds `prose.toml` or `prose.lock`, else
    only its own files and its `src/` tree (a file in another subdirectory is a project
    of its own), so a stray file's project never walks the directory tree around it."""
    if any((root / marker).is_file() for marker in ("prose.toml", "prose.lock")):
        return discover_resolved([root], base)
    ignore = _GitIgnore.for_root(root)
    home = str(base.resolve())
    found = {}
    for file in sorted(root.glob(f"*{SUFFIX}")):
        resolved = str(file.resolve())
        if file.is_file() and not ignore.ignored_resolved(resolved, False):
            found[resolved] = SourceRef(_display(file, resolved, home), file)
    source = root / "src"
    if source.is_dir() and not ignore.ignored(source, True):
        for resolved, ref in discover_resolved([source], base).items():
            found.setdefault(resolved, ref)
    return found


def discover(
    paths: Iterable[Path], base: Path, exclude: Iterable[Path] = (), *, legacy: bool = False
) -> list[SourceRef]:
    """Every `.prose.md` under `paths` (files are taken as given), sorted, de-duplicated;
    with `legacy`, the legacy `.prose` programs under them too (`prosec lint` says what
    they are; nothing compiles them)."""
    return sorted(discover_resolved(paths, base, exclude, legacy=legacy).values())


def discover_resolved(
    paths: Iterable[Path], base: Path, exclude: Iterable[Path] = (), *, legacy: bool = False
) -> dict[str, SourceRef]:
    """`discover`'s files by resolved path (a string), in the order they were found."""
    excluded = {str(p.resolve()) for p in exclude}
    found: dict[str, SourceRef] = {}
    home = str(base.resolve())
    for path in paths:
        if not path.exists():
            raise DiscoveryError(f"{path}: no such file or directory")
        if path.is_file():
            resolved = str(path.resolve())
            found.setdefault(resolved, SourceRef(_display(path, resolved, home), path))
            continue
        if not path.is_dir():  # a FIFO, socket or device: nothing to lint, and a trap
            raise DiscoveryError(f"{path}: not a regular file or directory")
        ignore = _GitIgnore.for_root(path)
        for file, resolved in _walk(path, ignore, excluded, legacy):
            found.setdefault(resolved, SourceRef(_display(file, resolved, home), file))
    return found


def _display(path: Path, resolved: str, home: str) -> str:
    """`display_path` with both paths already resolved (one realpath per file, not two)."""
    inside = _relative(resolved, home)
    return inside if inside is not None else path.as_posix()


def _relative(resolved: str, base: str) -> str | None:
    """`resolved` relative to `base` (both resolved, as strings), None when outside it."""
    if resolved == base:
        return "."
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not resolved.startswith(prefix):
        return None
    rest = resolved[len(prefix) :]
    return rest if os.sep == "/" else rest.replace(os.sep, "/")


def _walk(
    root: Path, ignore: _GitIgnore, excluded: set[str], legacy: bool = False
) -> Iterable[tuple[Path, str]]:
    """(path, resolved path) of every source under `root`, top-down in name order, as
    `os.walk` visits them (symlinked directories are not entered). Each directory is
    resolved once; a file costs a realpath only when it is a symlink itself."""
    pending = [(root, str(root.resolve()))]
    while pending:
        current, real = pending.pop()
        try:
            with os.scandir(current) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:  # as os.walk: an unreadable directory is skipped
            continue
        directories = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            name = entry.name
            if is_dir:
                if name in SKIPPED_DIRS or entry.is_symlink():
                    continue
                child = os.path.join(real, name)
                if child in excluded or ignore.ignored_resolved(child, True):
                    continue
                directories.append((current / name, child))
            elif name.endswith(SUFFIX) or (legacy and name.endswith(LEGACY_SUFFIX)):
                file = current / name
                resolved = (
                    os.path.realpath(file) if entry.is_symlink() else os.path.join(real, name)
                )
                if resolved not in excluded and not ignore.ignored_resolved(resolved, False):
                    yield file, resolved
        pending.extend(reversed(directories))


class _GitIgnore:
    """The `.gitignore` of a source root (and of the enclosing repository root)."""

    def __init__(self, base: Path, patterns: list[str]) -> None:
        self.base = base.resolve()
        self._base = str(self.base)
        self.spec = None
        if patterns:
            import pathspec

            self.spec = pathspec.PathSpec.from_lines("gitignore", patterns)

    @classmethod
    def for_root(cls, root: Path) -> _GitIgnore:
        repo = _repo_root(root)
        base = repo or root
        patterns: list[str] = []
        ignore_file = base / ".gitignore"
        if ignore_file.is_file():
            try:
                patterns = ignore_file.read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                patterns = []
        return cls(base, patterns)

    def ignored(self, path: Path, is_dir: bool) -> bool:
        return self.spec is not None and self.ignored_resolved(str(path.resolve()), is_dir)

    def ignored_resolved(self, resolved: str, is_dir: bool) -> bool:
        """`ignored` for a path already resolved (a string)."""
        if self.spec is None:
            return False
        rel = _relative(resolved, self._base)
        if rel is None:
            return False
        return bool(self.spec.match_file(rel + ("/" if is_dir else "")))


def _repo_root(start: Path) -> Path | None:
    for candidate in (start.resolve(), *start.resolve().parents):
        if (candidate / ".git").exists():
            return candidate
    return None


@functools.lru_cache(maxsize=1 << 16)
def text_digest(text: str) -> str:
    """The SHA-256 hex digest of a source text's UTF-8 bytes. A build asks for it several
    times per file (its key, the parse cache, Forme's memo, the lint findings) and the
    text is one object throughout, so each file is hashed once."""
    return hashlib.sha256(text.encode()).hexdigest()
