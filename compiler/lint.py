"""The lint driver: read files, parse, lower continuity, run the rule chain, apply policy."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from prosec.runtime.userjson import JSONInputError, read_limited

from . import diagnostics as diag
from . import rules
from .config import Config
from .diagnostics import CODES, Diagnostic
from .discover import SourceRef, project_key
from .ir import Project, SourceFile, Span
from .parse import parse_source
from .passes import continuity

SOURCE_LIMIT = 256 << 20  # bytes of one source file


@dataclass(frozen=True, slots=True, kw_only=True)
class LintResult:
    project: Project
    diagnostics: tuple[Diagnostic, ...]

    @property
    def has_errors(self) -> bool:
        return diag.has_errors(self.diagnostics)


def read_source(ref: SourceRef) -> tuple[str | None, Diagnostic | None]:
    """The file's text, or a `file_unreadable` diagnostic (never an exception)."""
    try:  # a regular file only: a FIFO named *.prose.md would block the reader
        data = read_limited(ref.path, SOURCE_LIMIT, what="")
    except JSONInputError as exc:
        return None, diag.make("file_unreadable", str(exc), _origin(ref.display))
    return decode_source(data, ref.display)


def decode_source(data: bytes, display: str) -> tuple[str | None, Diagnostic | None]:
    """UTF-8 (an optional BOM dropped) with line endings normalized to `\\n`."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, diag.make(
            "file_unreadable",
            f"file is not UTF-8 (invalid byte 0x{data[exc.start]:02x} at offset {exc.start})",
            Span(path=display, line=line, column=1, end_line=line, end_column=1),
        )
    return text.replace("\r\n", "\n").replace("\r", "\n"), None


def parse_texts(sources: Iterable[tuple[str, str]]) -> tuple[Project, list[Diagnostic]]:
    """Parse (display path, text) pairs into a project; a parser bug becomes a diagnostic."""
    files: list[SourceFile] = []
    found: list[Diagnostic] = []
    for path, text in sources:
        try:
            source, parse_diagnostics = parse_source(path, text)
        except Exception as exc:  # a bug must not hide the other files' findings
            found.append(_internal(path, exc))
            continue
        files.append(source)
        found.extend(parse_diagnostics)
    project, lowered = continuity.run(Project(files=tuple(files)))
    return project, found + lowered


def check_project(project: Project) -> list[Diagnostic]:
    try:
        return rules.run(project)
    except Exception as exc:
        return [_internal(project.files[0].path if project.files else "<project>", exc)]


def lint_texts(sources: Sequence[tuple[str, str]], config: Config) -> LintResult:
    project, found = parse_texts(sources)
    found += check_project(project)
    return LintResult(project=project, diagnostics=apply_policy(found, config))


def lint_refs(refs: Sequence[SourceRef], config: Config) -> LintResult:
    """Lint files grouped by project, so names must be unique per project, not per tree."""
    groups: dict[Path, list[tuple[str, str]]] = {}
    found: list[Diagnostic] = []
    for ref in refs:
        text, problem = read_source(ref)
        if problem is not None:
            found.append(problem)
        elif text is not None:
            groups.setdefault(project_key(ref.path), []).append((ref.display, text))
    files: list[SourceFile] = []
    for _, texts in sorted(groups.items()):
        project, parsed = parse_texts(texts)
        files.extend(project.files)
        found += parsed + check_project(project)
    return LintResult(project=Project(files=tuple(files)), diagnostics=apply_policy(found, config))


def apply_policy(found: Iterable[Diagnostic], config: Config) -> tuple[Diagnostic, ...]:
    """Selection, `--strict` and per-code severity overrides; deterministic order."""
    result = []
    for item in found:
        if item.code != "internal_error" and not config.enabled(item.code):
            continue
        info = CODES.get(item.code)
        if config.strict and info is not None and info.strict_severity is not None:
            item = item.with_severity(info.strict_severity)
        override = config.severity.get(item.code)
        if override is not None:
            item = item.with_severity(override)
        result.append(item)
    return tuple(sorted(set(result), key=Diagnostic.sort_key))


def _internal(path: str, exc: BaseException) -> Diagnostic:
    return diag.make(
        "internal_error",
        f"prosec failed on this file ({type(exc).__name__}: {exc}); please report it",
        _origin(path),
    )


def _origin(path: str) -> Span:
    return Span(path=path, line=1, column=1, end_line=1, end_column=1)
