"""The file system as the language server sees it: project roots, listings, stamps, reads."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from .. import config as config_mod
from ..diagnostics import Diagnostic
from ..discover import DiscoveryError, SourceRef, discover, display_path, project_key
from ..lint import read_source

Stamp = tuple[int, int]  # (mtime_ns, size): enough to notice an edit made outside the editor


class Disk(Protocol):
    """What the workspace model needs from the outside world (tests may fake it)."""

    def project_root(self, path: Path) -> Path: ...

    def list_sources(self, root: Path) -> tuple[Path, ...]: ...

    def list_tree(self, folder: Path) -> tuple[Path, ...]: ...

    def stamp(self, path: Path) -> Stamp | None: ...

    def read(self, path: Path, display: str) -> tuple[str | None, Diagnostic | None]: ...

    def load_config(self, root: Path) -> config_mod.Config: ...


class LocalDisk:
    """The real file system, through the same discovery and reading code as `prosec lint`."""

    def project_root(self, path: Path) -> Path:
        return project_key(path)

    def list_sources(self, root: Path) -> tuple[Path, ...]:
        """The `.prose.md` files `prosec lint ROOT` would group into the project at `root`."""
        wanted = root.resolve()
        return tuple(p for p in self.list_tree(root) if project_key(p) == wanted)

    def list_tree(self, folder: Path) -> tuple[Path, ...]:
        """Every `.prose.md` under `folder`, whatever project it belongs to."""
        try:
            refs = discover([folder], folder)
        except DiscoveryError:
            return ()
        return tuple(sorted(ref.path.resolve() for ref in refs))

    def stamp(self, path: Path) -> Stamp | None:
        try:
            stat = os.stat(path)
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def read(self, path: Path, display: str) -> tuple[str | None, Diagnostic | None]:
        return read_source(SourceRef(display, path))

    def load_config(self, root: Path) -> config_mod.Config:
        return config_mod.load(root)


def relative(path: Path, root: Path) -> str:
    """How diagnostics name a file of the project: root-relative and forward-slashed.

    Both paths are already resolved here, so no file-system call is needed per keystroke."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return display_path(path, root)


def read_config_text(root: Path) -> str | None:
    """The text of the project's prose.toml, None when there is none (or it is unreadable)."""
    try:
        return (root / config_mod.CONFIG_NAME).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
