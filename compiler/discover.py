"""Source discovery: paths given on the command line → the `.prose.md` files to read."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SUFFIX = ".prose.md"
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
    directory = path.resolve().parent
    for candidate in (directory, *directory.parents):
        if (candidate / "prose.toml").is_file() or (candidate / "prose.lock").is_file():
            return candidate
    for candidate in (directory, *directory.parents):
        if candidate.name == "src":
            return candidate.parent
    return directory


def project_sources(root: Path, base: Path) -> list[SourceRef]:
    """The sources `project_key` puts in the project at `root` (a superset, to filter):
    its whole tree when `root` holds `prose.toml` or `prose.lock`, else only its own files
    and its `src/` tree (a file in another subdirectory is a project of its own), so a
    stray file's project never walks the directory tree around it."""
    if any((root / marker).is_file() for marker in ("prose.toml", "prose.lock")):
        return discover([root], base)
    ignore = _GitIgnore.for_root(root)
    found = [
        SourceRef(_display(file, file.resolve(), base.resolve()), file)
        for file in sorted(root.glob(f"*{SUFFIX}"))
        if file.is_file() and not ignore.ignored(file, False)
    ]
    source = root / "src"
    if source.is_dir() and not ignore.ignored(source, True):
        found += discover([source], base)
    return sorted(found)


def discover(paths: Iterable[Path], base: Path, exclude: Iterable[Path] = ()) -> list[SourceRef]:
    """Every `.prose.md` under `paths` (files are taken as given), sorted, de-duplicated."""
    excluded = {p.resolve() for p in exclude}
    found: dict[Path, SourceRef] = {}
    home = base.resolve()
    for path in paths:
        if not path.exists():
            raise DiscoveryError(f"{path}: no such file or directory")
        if path.is_file():
            resolved = path.resolve()
            found.setdefault(resolved, SourceRef(_display(path, resolved, home), path))
            continue
        if not path.is_dir():  # a FIFO, socket or device: nothing to lint, and a trap
            raise DiscoveryError(f"{path}: not a regular file or directory")
        ignore = _GitIgnore.for_root(path)
        for file, resolved in _walk(path, ignore, excluded):
            found.setdefault(resolved, SourceRef(_display(file, resolved, home), file))
    return sorted(found.values())


def _display(path: Path, resolved: Path, home: Path) -> str:
    """`display_path` with both paths already resolved (one realpath per file, not two)."""
    try:
        return resolved.relative_to(home).as_posix()
    except ValueError:
        return path.as_posix()


def _walk(root: Path, ignore: _GitIgnore, excluded: set[Path]) -> Iterable[tuple[Path, Path]]:
    """(file, its resolved path): one realpath per directory, not per file (os.walk
    never follows a symlinked directory, so a plain file's realpath is its resolved
    directory joined with its name; a symlinked file is resolved itself)."""
    for dirpath, dirnames, filenames in os.walk(root):
        current = Path(dirpath)
        real = current.resolve()
        kept = []
        for name in sorted(dirnames):
            child = current / name
            if name in SKIPPED_DIRS or child.resolve() in excluded or ignore.ignored(child, True):
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            if name.endswith(SUFFIX):
                file = current / name
                resolved = file.resolve() if os.path.islink(file) else real / name
                if resolved not in excluded and not ignore.ignored(file, False, resolved):
                    yield file, resolved


class _GitIgnore:
    """The `.gitignore` of a source root (and of the enclosing repository root)."""

    def __init__(self, base: Path, patterns: list[str]) -> None:
        self.base = base.resolve()
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

    def ignored(self, path: Path, is_dir: bool, resolved: Path | None = None) -> bool:
        if self.spec is None:
            return False
        try:
            rel = (resolved or path.resolve()).relative_to(self.base).as_posix()
        except ValueError:
            return False
        return bool(self.spec.match_file(rel + ("/" if is_dir else "")))


def _repo_root(start: Path) -> Path | None:
    for candidate in (start.resolve(), *start.resolve().parents):
        if (candidate / ".git").exists():
            return candidate
    return None
