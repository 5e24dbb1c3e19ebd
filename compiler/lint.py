"""The lint driver: read files, parse, lower continuity, run the rule chain, apply policy;
`lint_refs` lints whole projects through the pipeline's analysis slice."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from prosec.runtime.userjson import JSONInputError, read_limited

from . import diagnostics as diag
from .config import Config
from .diagnostics import CODES, Diagnostic
from .discover import (
    LEGACY_SUFFIX,
    DiscoveryError,
    ProjectKeys,
    SourceRef,
    display_path,
    project_sources,
)
from .ir import Project, SourceFile, Span
from .values import value

if TYPE_CHECKING:  # the rule chain loads when a check runs: a cached lint never needs it
    from .rules import CheckMemo

SOURCE_LIMIT = 256 << 20  # bytes of one source file


@value(kw_only=True)
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


def parse_texts(
    sources: Iterable[tuple[str, str]],
    parse: Callable[[str, str], tuple[SourceFile, list[Diagnostic]]] | None = None,
) -> tuple[Project, list[Diagnostic]]:
    """Parse (display path, text) pairs into a project; a parser bug becomes a diagnostic.
    `parse` replaces `parse_source` (the language server's chunked re-parser)."""
    # markdown-it and the passes load on first use: a lint answered from the cache
    # never needs them
    from .parse import parse_source

    parse = parse or parse_source
    from .passes import continuity

    files: list[SourceFile] = []
    found: list[Diagnostic] = []
    for path, text in sources:
        if path.endswith(LEGACY_SUFFIX):
            found.append(legacy_program(path, text))
            continue
        try:
            source, parse_diagnostics = parse(path, text)
        except Exception as exc:  # a bug must not hide the other files' findings
            found.append(_internal(path, exc))
            continue
        files.append(source)
        found.extend(parse_diagnostics)
    project, lowered = continuity.run(Project(files=tuple(files)))
    return project, found + lowered


def legacy_program(path: str, text: str) -> Diagnostic:
    """A `.prose` file is a legacy standalone program (seed 000), not Contract Markdown:
    said once, on its first line, with the command that migrates it."""
    first = text.split("\n", 1)[0]
    return diag.make(
        "legacy_program",
        f"`{path.rsplit('/', 1)[-1]}` is a legacy `.prose` program, not Contract Markdown; "
        f"run `prosec upgrade {path}` to migrate it to `.prose.md` "
        "(`prosec run` also runs it as it is)",
        Span(path=path, line=1, column=1, end_line=1, end_column=max(len(first), 1) + 1),
    )


def check_project(
    project: Project, focus: Collection[str] | None = None, memo: CheckMemo | None = None
) -> list[Diagnostic]:
    from . import rules

    try:
        return rules.run(project, focus, memo)
    except Exception as exc:
        return [_internal(project.files[0].path if project.files else "<project>", exc)]


def lint_texts(sources: Sequence[tuple[str, str]], config: Config) -> LintResult:
    """Lint (display path, text) pairs as one project, with every check `prosec build`
    makes before it emits (wiring, pattern expansion, lowering)."""
    from .pipeline import analyse  # the pipeline imports this module

    project, found = parse_texts(sources)
    unit = analyse(project, config)
    return LintResult(
        project=unit.project, diagnostics=apply_policy([*found, *unit.diagnostics], config)
    )


def lint_refs(
    refs: Sequence[SourceRef],
    config: Config,
    *,
    base: Path | None = None,
    configs: Callable[[Path], Config] | None = None,
    overlay: Mapping[Path, str] | None = None,
    cache_dir: Path | None = None,
) -> LintResult:
    """Lint files project by project, as `prosec build` and the language server see them.

    Each file belongs to the project `project_key` names. The whole project is read for
    context (the files `prosec lint` was not given too, so a single file is wired against
    its neighbours), checked, and its build sources wired; only the diagnostics of the
    given files (and of the project's prose.toml) are reported. `configs` gives each
    project root its settings (default: `config` for all); `base` is what display paths
    are relative to (default: the current directory); `overlay` holds files (by resolved
    path) to read as given rather than from disk (`lint --diff` checks its own fixes).

    With `cache_dir` (the base of the caches; never with `overlay`) each project's result
    and parses are kept in the lint cache (`lint_cache`): an unchanged project is not
    analysed again, and an unchanged file is not parsed again. A project found in the
    cache contributes no files to the result's project (only its diagnostics)."""
    base = base or Path.cwd()
    home = base.resolve()
    groups: dict[Path, list[SourceRef]] = {}
    key = ProjectKeys()
    real = _resolved(refs)
    for ref in refs:
        groups.setdefault(key.of_resolved(real[ref]), []).append(ref)
    files: list[SourceFile] = []
    found: list[Diagnostic] = []
    for root, given in sorted(groups.items()):
        settings = configs(root) if configs is not None else config
        members = _members(root, given, base, key, real)
        shown = {ref.display for ref in given}
        texts: list[tuple[str, str]] = []
        unreadable: list[str] = []
        for ref in members:
            given_text = overlay.get(ref.path.resolve()) if overlay else None
            text, problem = (given_text, None) if given_text is not None else read_source(ref)
            if problem is not None:
                unreadable.append(ref.display)
                if ref.display in shown:
                    found.append(problem)
            elif text is not None:
                texts.append((ref.display, text))
        cache = None
        if cache_dir is not None and overlay is None:
            from .lint_cache import LintCache, result_key

            cache = LintCache.open(cache_dir, root)
            input_key = result_key(settings, root, home, shown, texts, unreadable)
            hit = cache.result(input_key)
            if hit is not None:
                found.extend(hit)
                continue
        reported, shown_files, imports = _lint_project(
            root, settings, base, members, shown, texts, cache
        )
        found.extend(reported)
        files.extend(shown_files)
        if cache is not None:
            if imports is not None:
                cache.remember(input_key, reported, imports)
            cache.save({path for path, _ in texts})
    ordered = tuple(sorted(set(found), key=Diagnostic.sort_key))  # each project's policy applied
    return LintResult(project=Project(files=tuple(files)), diagnostics=ordered)


def _lint_project(
    root: Path,
    settings: Config,
    base: Path,
    members: Sequence[SourceRef],
    shown: Collection[str],
    texts: Sequence[tuple[str, str]],
    cache: ParseCache | None,
) -> tuple[list[Diagnostic], list[SourceFile], list[Path] | None]:
    """One project's reported diagnostics, its shown files, and the dependency files read
    (None when a reference did not resolve or a dependency has errors: what installing
    a dependency changes is not all in the cache key, so such a result is not kept)."""
    from .deps import load_from_disk
    from .pipeline import analyse, source_root  # the pipeline imports this module

    project, parsed = parse_cached(texts, cache)
    loaded = load_from_disk(project, root, base, {ref.display: ref.path for ref in members})
    imported = {path for path, _ in loaded.files}
    sources = source_root(root, settings).resolve()
    directories = {ref.path.parent for ref in members}
    inside = {d for d in directories if d.resolve().is_relative_to(sources)}
    wired = {ref.display for ref in members if ref.path.parent in inside} | imported
    unit = analyse(loaded.project, settings, wired=wired, focus=shown)
    displays = {ref.display for ref in members}
    reported: list[Diagnostic] = []
    for item in apply_policy([*parsed, *loaded.diagnostics, *unit.diagnostics], settings):
        if item.span.path in shown or item.span.path in imported:
            reported.append(item)  # a dependency's own errors break the build too
        elif item.span.path not in displays:  # prose.toml (a stale wiring pin)
            path = display_path((settings.root or root) / item.span.path, base)
            reported.append(replace(item, span=replace(item.span, path=path)))
    shown_files = [f for f in unit.project.files if f.path in shown]
    imports = None if loaded.diagnostics else [path for _, path in loaded.files]
    return reported, shown_files, imports


class ParseCache(Protocol):
    """Parsed files by display path and content digest (`lint_cache.LintCache`)."""

    def get(self, path: str, digest: str) -> tuple[SourceFile, list[Diagnostic]] | None: ...

    def put(self, path: str, digest: str, source: SourceFile, found: list[Diagnostic]) -> None: ...


def parse_cached(
    texts: Sequence[tuple[str, str]], cache: ParseCache | None
) -> tuple[Project, list[Diagnostic]]:
    """`parse_texts`, reusing (and filling) `cache` for files whose content it knows."""
    if cache is None:
        return parse_texts(texts)
    import hashlib

    digests = {path: hashlib.sha256(text.encode()).hexdigest() for path, text in texts}
    reused = {}
    for path, _ in texts:
        hit = cache.get(path, digests[path])
        if hit is not None:
            reused[path] = hit
    project, found = parse_texts([(path, text) for path, text in texts if path not in reused])
    own: dict[str, list[Diagnostic]] = {}
    for item in found:
        own.setdefault(item.span.path, []).append(item)
    for source in project.files:
        cache.put(source.path, digests[source.path], source, own.get(source.path, []))
    files = sorted([*project.files, *(hit[0] for hit in reused.values())], key=lambda f: f.path)
    found += [d for hit in reused.values() for d in hit[1]]
    return Project(files=tuple(files)), found


def _resolved(refs: Sequence[SourceRef]) -> dict[SourceRef, str]:
    """Each file's resolved path: a realpath per directory, and one lstat per file (a
    symlinked file is resolved on its own)."""
    import os

    directories: dict[Path, str] = {}
    found = {}
    for ref in refs:
        parent = ref.path.parent
        real = directories.get(parent)
        if real is None:
            real = directories[parent] = os.path.realpath(parent)
        if os.path.islink(ref.path):
            found[ref] = os.path.realpath(ref.path)
        else:
            found[ref] = os.path.join(real, ref.path.name)
    return found


def _members(
    root: Path,
    given: Sequence[SourceRef],
    base: Path,
    key: ProjectKeys,
    real: Mapping[SourceRef, str],
) -> list[SourceRef]:
    """Every source of the project at `root` (its tree, minus nested projects) and the
    given files (`real`: their resolved paths), each once; given files keep their display
    path."""
    resolved = root.resolve()
    chosen = {real[ref]: ref for ref in given}
    try:
        tree = project_sources(root, base)
    except DiscoveryError:
        tree = {}
    for path, ref in tree.items():
        if path not in chosen and key.of_resolved(path) == resolved:
            chosen[path] = ref
    return sorted(chosen.values())


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
