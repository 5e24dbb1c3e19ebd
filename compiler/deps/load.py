"""Dependency loading: the files a project's references name, read from disk and added to
the project, transitively, each reference recorded with the file it resolved to.

The build, `prosec lint` and the language server call `load` between parsing and the
pipeline, so imported contracts take part in checks, pattern expansion and Forme. The
loaded files carry `dependency` (their `host/owner/repo/path` locator): the project's
lint rules skip them and only their errors are kept, since their author, not the
project's, can act on the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from .. import diagnostics as diag
from ..diagnostics import Diagnostic, Severity
from ..ir import Import, Project, SourceFile
from .identifiers import Identifier, is_dependency
from .lock import locked
from .resolve import Found, Problem, resolve
from .scan import references

# (absolute path, display path) → the parsed file, or None and why it cannot be read
Reader = Callable[[Path, str], tuple[SourceFile | None, list[Diagnostic]]]


@dataclass(frozen=True, slots=True)
class Reference:
    """One dependency reference as `prosec install` needs it: who wrote it and what."""

    referrer: str | None  # the referring file's locator; None for a project file
    identifier: Identifier | None  # None when it did not parse (or a local path)
    reference: Import
    problem: Problem | None = None


@dataclass(frozen=True, slots=True)
class Loaded:
    project: Project  # the project's files (imports recorded) and the dependency files
    diagnostics: tuple[Diagnostic, ...]  # resolution problems, and dependency files' errors
    references: tuple[Reference, ...]  # every dependency reference met, in load order
    files: tuple[tuple[str, Path], ...]  # (display, path) of each dependency file read


def load(
    project: Project,
    root: Path,
    *,
    locate: Callable[[str], Path],
    display: Callable[[Path], str],
    read: Reader,
    real: Callable[[Path], Path] | None = None,
) -> Loaded:
    """Resolve every reference of `project` (files named by display path, found on disk
    by `locate`) against ROOT, reading each dependency file once (`display` names it).
    `real` resolves a path (default: `Path.resolve`; the language server remembers them)."""
    _key = real or _resolve
    files = {f.path: f for f in project.files}
    known: dict[Path, str] | None = None  # resolved path → display, made when first needed
    pinned = locked(root)
    queue = [f.path for f in project.files]
    found: list[Diagnostic] = []
    met: list[Reference] = []
    read_files: list[tuple[str, Path]] = []
    index = 0
    while index < len(queue):
        source = files[queue[index]]
        index += 1
        path = locate(source.path)
        recorded: list[Import] = []
        for ref in references(source):
            if ref.kind != "use" and not is_dependency(ref.text):
                continue  # `pattern: review-loop` names a pattern of the project
            outcome = resolve(
                ref.text,
                root=root,
                referrer=path,
                referrer_locator=source.dependency,
                locked=pinned,
            )
            if isinstance(outcome, Problem):
                found.append(diag.make(outcome.code, outcome.message, ref.span))
                met.append(Reference(source.dependency, outcome.identifier, ref, outcome))
                recorded.append(ref)
                continue
            met.append(Reference(source.dependency, outcome.identifier, ref))
            if known is None:  # one realpath per file, only in a project that has references
                known = {_key(locate(f.path)): f.path for f in project.files}
            target = known.get(_key(outcome.path))
            if target is None and (outcome.locator is not None):
                target = _read(outcome, display, read, files, found, read_files)
                if target is not None:
                    known[_key(outcome.path)] = target
                    queue.append(target)
            elif target is None:  # a local file outside the project's sources
                target = display(outcome.path)
            recorded.append(replace(ref, target=target))
        if recorded:
            files[source.path] = replace(source, imports=tuple(recorded))
    loaded = Project(files=tuple(sorted(files.values(), key=lambda f: f.path)))
    return Loaded(
        project=loaded,
        diagnostics=tuple(found),
        references=tuple(met),
        files=tuple(read_files),
    )


def _read(
    outcome: Found,
    display: Callable[[Path], str],
    read: Reader,
    files: dict[str, SourceFile],
    found: list[Diagnostic],
    read_files: list[tuple[str, Path]],
) -> str | None:
    name = display(outcome.path)
    source, problems = read(outcome.path, name)
    # a dependency's warnings are its author's to act on; its errors break this build
    found.extend(d for d in problems if d.severity is Severity.ERROR)
    if source is None:
        return None
    files[name] = replace(source, dependency=outcome.locator)
    read_files.append((name, outcome.path))
    return name


def _resolve(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


def dependency_files(project: Project) -> frozenset[str]:
    """Display paths of the files loaded from deps/."""
    return frozenset(f.path for f in project.files if f.dependency is not None)
