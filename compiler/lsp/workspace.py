"""The server's project model: open buffers over files on disk → parsed, linted, wired projects."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .. import diagnostics as diag
from ..config import CONFIG_NAME, ROOT_MARKERS, Config, ConfigError
from ..deps.load import Loaded, load
from ..diagnostics import Diagnostic
from ..discover import SUFFIX
from ..ir import NODE_KINDS, Contract, Project, SourceFile, Span, Topology
from ..lint import apply_policy, check_project, parse_texts
from ..pipeline import source_root
from ..rules import RuleMemo
from .disk import Disk, Stamp, relative
from .positions import UTF16, LineIndex

if TYPE_CHECKING:
    from ..parse.chunks import Reparser

# the build's wiring as the workspace calls it: project + config → the expanded project
# (pattern instances become nodes), Forme's topology, and their findings
Wire = Callable[[Project, Config], tuple[Project, Topology | None, list[Diagnostic]]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Analysis:
    """Everything the features need about one project at one moment."""

    root: Path
    config: Config
    config_error: str | None
    project: Project
    diagnostics: tuple[Diagnostic, ...]
    topology: Topology | None
    wired: frozenset[str]  # display paths of the files `prosec build` compiles and wires
    paths: Mapping[str, Path]  # display path → absolute path
    displays: Mapping[Path, str]  # absolute path → display path
    by_path: Mapping[str, tuple[Diagnostic, ...]] = field(default_factory=dict)

    def display(self, path: Path) -> str | None:
        return self.displays.get(path.resolve())

    def source(self, display: str) -> SourceFile | None:
        return self.project.file(display)

    def diagnostics_for(self, display: str) -> tuple[Diagnostic, ...]:
        return self.by_path.get(display, ())

    def index(self, display: str, encoding: str = UTF16) -> LineIndex:
        source = self.source(display)
        return LineIndex(source.text if source is not None else "", encoding)

    def node(self, name: str) -> Contract | None:
        """The producer node called `name` (responsibilities and gateways)."""
        return next(
            (c for c in self.project.contracts if c.name == name and c.kind in NODE_KINDS), None
        )

    def locate(self, span: Span) -> Path:
        return self.paths.get(span.path, self.root / span.path)


@dataclass(slots=True)
class _Buffer:
    text: str
    version: int


@dataclass(slots=True)
class _Parsed:
    path: Path
    display: str
    text: str
    source: SourceFile | None
    diagnostics: list[Diagnostic]


LIVE_LIMIT = 1 << 20  # characters of one file the server analyses as you type


class Workspace:
    """Open buffers win over the disk; each file is re-parsed only when its text changes.

    A file longer than `live_limit` characters is not parsed: it gets one `file_too_large`
    diagnostic (`prosec lint` checks it), so no single buffer can stall the server."""

    def __init__(self, disk: Disk, wire: Wire | None = None, live_limit: int = LIVE_LIMIT) -> None:
        self.disk = disk
        self.wire = wire
        self.live_limit = live_limit
        self.folders: list[Path] = []
        self._buffers: dict[Path, _Buffer] = {}
        self._roots: dict[Path, Path] = {}
        self._listings: dict[Path, tuple[Path, ...]] = {}
        self._disk_texts: dict[Path, tuple[Stamp | None, str | None, Diagnostic | None]] = {}
        self._parsed: dict[Path, _Parsed] = {}
        self._configs: dict[Path, tuple[Stamp | None, Config, ConfigError | None]] = {}
        self._analyses: dict[Path, tuple[object, Analysis]] = {}
        self._resolved: dict[Path, Path] = {}
        self._displays: dict[tuple[Path, Path], str] = {}
        self._reparse: Reparser | None = None  # reuses the `##` chunks an edit left alone
        self._rules: dict[Path, RuleMemo] = {}  # per project: unchanged files' findings

    # -- buffers -----------------------------------------------------------------------------

    def open(self, path: Path, text: str, version: int) -> Path:
        path = path.resolve()
        self._buffers[path] = _Buffer(normalize(text), version)
        root = self.root_of(path)
        if path not in self._listings.get(root, (path,)):
            self._listings.pop(root, None)  # a file the listing has not seen yet
        return root

    def change(self, path: Path, text: str, version: int) -> Path:
        path = path.resolve()
        self._buffers[path] = _Buffer(normalize(text), version)
        return self.root_of(path)

    def close(self, path: Path) -> Path:
        path = path.resolve()
        self._buffers.pop(path, None)
        return self.root_of(path)

    def version(self, path: Path) -> int | None:
        buffer = self._buffers.get(path.resolve())
        return buffer.version if buffer is not None else None

    def open_paths(self, root: Path) -> list[Path]:
        return sorted(p for p in self._buffers if self.root_of(p) == root)

    def open_roots(self) -> list[Path]:
        return sorted({self.root_of(p) for p in self._buffers})

    # -- disk events -------------------------------------------------------------------------

    def refresh(self, paths: Iterable[Path]) -> list[Path]:
        """Files changed, appeared or vanished on disk; returns the roots of open projects
        whose analysis may differ now."""
        changed = [p.resolve() for p in paths]
        self._resolved.clear()  # a file or a symlink may have moved
        self._displays.clear()
        if any(p.name in ROOT_MARKERS for p in changed):
            # a project boundary moved: every grouping may differ
            self._roots.clear()
            self._listings.clear()
            self._configs.clear()
            return self.open_roots()
        affected: set[Path] = set()
        for path in changed:
            if path.name.endswith(SUFFIX):
                root = self.root_of(path)
                self._listings.pop(root, None)
                self._disk_texts.pop(path, None)
                affected.add(root)
        return sorted(affected & set(self.open_roots()))

    # -- projects ----------------------------------------------------------------------------

    def root_of(self, path: Path) -> Path:
        path = path.resolve()
        root = self._roots.get(path)
        if root is None:
            root = self._roots[path] = self.disk.project_root(path).resolve()
        return root

    def folder_roots(self) -> list[Path]:
        """Every project under the workspace folders, plus those of open files."""
        roots = set(self.open_roots())
        for folder in self.folders:
            for path in self.disk.list_tree(folder):
                roots.add(self.root_of(path))
        return sorted(roots)

    def analysis(self, root: Path) -> Analysis:
        """The project at `root` as the editor currently sees it (cached until inputs change)."""
        root = root.resolve()
        config_stamp, config, config_error = self._config(root)
        parsed = [p for p in (self._parse(path, root) for path in self._members(root)) if p]
        loaded, imported = self._dependencies(root, parsed)
        problem = str(config_error) if config_error is not None else None
        every = (*parsed, *imported)
        key = (config_stamp, problem, tuple((p.display, p.text) for p in every), loaded.diagnostics)
        cached = self._analyses.get(root)
        if cached is not None and cached[0] == key:
            return cached[1]
        analysis = self._analyse(root, config, config_error, parsed, loaded, imported)
        self._analyses[root] = (key, analysis)
        return analysis

    def _members(self, root: Path) -> list[Path]:
        listing = self._listings.get(root)
        if listing is None:
            listing = self._listings[root] = self.disk.list_sources(root)
        members = set(listing) | set(self.open_paths(root))
        return sorted(members, key=lambda p: self._display(p, root))

    def _text(self, path: Path, display: str) -> tuple[str | None, Diagnostic | None] | None:
        """The buffer, else the file's text (re-read when its stamp moved); None when the
        file is gone from disk and not open."""
        buffer = self._buffers.get(path)
        if buffer is not None:
            return buffer.text, None
        stamp = self.disk.stamp(path)
        if stamp is None:
            return None
        cached = self._disk_texts.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1], cached[2]
        text, problem = self.disk.read(path, display)
        self._disk_texts[path] = (stamp, text, problem)
        return text, problem

    def _parse(self, path: Path, root: Path) -> _Parsed | None:
        display = self._display(path, root)
        read = self._text(path, display)
        if read is None:
            return None
        text, problem = read
        cached = self._parsed.get(path)
        if (
            cached is not None
            and text is not None
            and cached.display == display
            and cached.text == text
        ):
            return cached
        if text is None:
            parsed = _Parsed(path, display, "", None, [problem] if problem else [])
        elif len(text) > self.live_limit:
            parsed = _Parsed(path, display, text, None, [_too_large(display, len(text), self)])
        else:
            if self._reparse is None:
                from ..parse.chunks import Reparser

                self._reparse = Reparser()
            project, found = parse_texts([(display, text)], self._reparse)
            source = project.files[0] if project.files else None
            parsed = _Parsed(path, display, text, source, found)
        self._parsed[path] = parsed
        return parsed

    def _dependencies(self, root: Path, parsed: list[_Parsed]) -> tuple[Loaded, list[_Parsed]]:
        """The files the project's references name, from deps/ (disk-only, as the build)."""
        paths = {p.display: p.path for p in parsed}
        imported: list[_Parsed] = []

        def read(path: Path, display: str) -> tuple[SourceFile | None, list[Diagnostic]]:
            found = self._parse(path.resolve(), root)
            if found is None:
                return None, []
            imported.append(found)
            return found.source, found.diagnostics

        project = Project(files=tuple(p.source for p in parsed if p.source is not None))
        loaded = load(
            project,
            root,
            locate=lambda display: paths.get(display, root / display),
            display=lambda path: self._display(self._real(path), root),
            read=read,
            real=self._real,
        )
        return loaded, imported

    def _display(self, path: Path, root: Path) -> str:
        """`relative(path, root)`, remembered (asked for every file at each keystroke)."""
        found = self._displays.get((path, root))
        if found is None:
            found = self._displays[(path, root)] = relative(path, root)
        return found

    def _real(self, path: Path) -> Path:
        """`path.resolve()`, remembered until a disk event (`refresh`): the dependency
        loader asks for every file's on each keystroke."""
        found = self._resolved.get(path)
        if found is None:
            try:
                found = path.resolve()
            except (OSError, RuntimeError):
                found = path.absolute()
            self._resolved[path] = found
        return found

    def _config(self, root: Path) -> tuple[Stamp | None, Config, ConfigError | None]:
        stamp = self.disk.stamp(root / CONFIG_NAME)
        cached = self._configs.get(root)
        if cached is not None and cached[0] == stamp:
            return cached
        try:
            entry: tuple[Stamp | None, Config, ConfigError | None] = (
                stamp,
                self.disk.load_config(root),
                None,
            )
        except ConfigError as exc:  # a broken prose.toml: defaults, and diagnostics on it
            entry = (stamp, Config(root=root), exc)
        self._configs[root] = entry
        return entry

    def _analyse(
        self,
        root: Path,
        config: Config,
        config_error: ConfigError | None,
        parsed: list[_Parsed],
        loaded: Loaded,
        imported: list[_Parsed],
    ) -> Analysis:
        project = loaded.project
        files = project.files
        found = [d for p in parsed for d in p.diagnostics]
        found += loaded.diagnostics  # unresolved references, and the dependencies' errors
        if config_error is not None:
            found += config_diagnostics(config_error)
        memo = self._rules.setdefault(root, RuleMemo())
        found += check_project(project, memo=memo)
        memo.retain([f.path for f in files])
        sources = source_root(root, config)
        built = frozenset(p.display for p in parsed if p.path.is_relative_to(sources)) | {
            p.display for p in imported
        }
        topology = None
        if self.wire is not None and built:
            try:
                expanded, topology, wired = self.wire(
                    Project(files=tuple(f for f in files if f.path in built)), config
                )
                found += wired
                by_display = {f.path: f for f in expanded.files}
                project = Project(files=tuple(by_display.get(f.path, f) for f in files))
            except Exception as exc:  # a Forme bug must not hide the lint findings
                found.append(_internal(sorted(built)[0], exc))
        diagnostics = apply_policy(found, config)
        by_path: dict[str, list[Diagnostic]] = {}
        for item in diagnostics:
            by_path.setdefault(item.span.path, []).append(item)
        return Analysis(
            root=root,
            config=config,
            config_error=str(config_error) if config_error is not None else None,
            project=project,
            diagnostics=diagnostics,
            topology=topology,
            wired=built,
            paths={p.display: p.path for p in (*parsed, *imported)},
            displays={p.path: p.display for p in (*parsed, *imported)},
            by_path={k: tuple(v) for k, v in by_path.items()},
        )


def config_diagnostics(error: ConfigError) -> list[Diagnostic]:
    """A prose.toml that cannot be used: one `config_invalid` per problem, on its line."""
    return [
        diag.make(
            "config_invalid",
            f"{problem.key}: {problem.message}" if problem.key else problem.message,
            Span(
                path=CONFIG_NAME,
                line=problem.line or 1,
                column=1,
                end_line=problem.line or 1,
                end_column=_LINE_END,
            ),
        )
        for problem in error.problems
    ]


_LINE_END = 10_000  # a column past any line's end: editors clamp it, so the whole line shows


def normalize(text: str) -> str:
    """The text as `prosec lint` reads it: no BOM, `\\n` line ends (line numbers unchanged)."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _internal(path: str, exc: BaseException) -> Diagnostic:
    return diag.make(
        "internal_error",
        f"prosec failed while wiring this project ({type(exc).__name__}: {exc}); please report it",
        Span(path=path, line=1, column=1, end_line=1, end_column=1),
    )


def _too_large(display: str, size: int, workspace: Workspace) -> Diagnostic:
    return diag.make(
        "file_too_large",
        f"this file is too large to analyse as you type ({size} characters; the limit is "
        f"{workspace.live_limit}); `prosec lint` checks it",
        Span(path=display, line=1, column=1, end_line=1, end_column=_LINE_END),
    )
