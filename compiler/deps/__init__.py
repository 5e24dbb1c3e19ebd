"""Dependencies: identifiers, disk-only resolution and loading (compile and run time), and
`prosec install` / `prosec preflight` (the only parts that run git).

Modules: identifiers (parsing, shorthands, candidates, clone URLs), scan (references of a
parsed file), resolve (one reference → a file on disk), load (a project + its dependency
files), lock (prose.lock), git (the `git` command-line client), install, preflight.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..diagnostics import Diagnostic
from ..ir import Project, SourceFile
from .load import Loaded, Reference, dependency_files, load

__all__ = ["Loaded", "Reference", "dependency_files", "load", "load_from_disk", "read_parsed"]


def read_parsed(path: Path, display: str) -> tuple[SourceFile | None, list[Diagnostic]]:
    """Read and parse one file as `prosec lint` does (a `Reader` for `load`)."""
    from ..discover import SourceRef
    from ..lint import parse_texts, read_source

    text, problem = read_source(SourceRef(display, path))
    if text is None:
        return None, [problem] if problem is not None else []
    parsed, found = parse_texts([(display, text)])
    return (parsed.files[0] if parsed.files else None), found


def load_from_disk(
    project: Project, root: Path, base: Path, paths: Mapping[str, Path] | None = None
) -> Loaded:
    """`load` for files whose display paths are relative to `base` (the build: the root;
    lint: the current directory) unless `paths` says where they are; dependency files are
    named relative to `base`."""
    from ..discover import display_path

    known = paths or {}
    return load(
        project,
        root,
        locate=lambda display: known.get(display, base / display),
        display=lambda path: display_path(path, base),
        read=read_parsed,
    )
