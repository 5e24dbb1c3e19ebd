"""The compile pipeline: PIPELINE (passes and gates) and the driver `compile_project`."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from . import diagnostics as diag
from .config import Config
from .diagnostics import Diagnostic
from .discover import LEGACY_SUFFIX, SUFFIX, discover, display_path, text_digest
from .ir import Project, SourceFile, Span, Topology
from .lint import apply_policy, check_project, legacy_program, parse_texts, read_source
from .lowered import CanonicalizerSpec, Validator
from .passes import canonicalize, forme, patterns
from .passes.canonicalize import Lowering
from .passes.tests import TestPlan
from .values import value

if TYPE_CHECKING:  # the build's own passes load when they run: `prosec lint` never does
    from .host import Host
    from .passes.forme import Wiring
    from .passes.tools import HostCheck
    from .rules import CheckMemo

Progress = Callable[[str, int, int], None]
# adds the files a project's references name (compiler/deps), and the problems found
Importer = Callable[[Project], tuple[Project, Sequence[Diagnostic]]]


class ParseCache(Protocol):
    """What the driver needs from a parse cache (see `prosec.compiler.cache`)."""

    def get(
        self, path: str, digest: str, text: str
    ) -> tuple[SourceFile, list[Diagnostic]] | None: ...

    def put(self, path: str, digest: str, source: SourceFile, found: list[Diagnostic]) -> None: ...


@value(kw_only=True)
class Unit:
    """Everything a compile knows so far; each pass returns a new one."""

    project: Project
    config: Config
    host: Host | None = None
    lowering: Lowering | None = None  # a memoized `canonicalize.lower` (the language server)
    focus: frozenset[str] | None = None  # check only these files' contracts (lint of a few)
    topology: Topology | None = None
    specs: Mapping[str, CanonicalizerSpec] = field(default_factory=dict)
    validators: Mapping[str, Validator] = field(default_factory=dict)
    tests: tuple[TestPlan, ...] = ()  # one plan per runnable test contract
    fingerprints: Mapping[str, str] = field(default_factory=dict)
    host_checks: tuple[HostCheck, ...] = ()
    intent: dict[str, Any] | None = None
    problems: tuple[str, ...] = ()  # the emitted intent's validation problems (a bug)
    validated: bool = False  # the intent passed schema and semantic validation
    diagnostics: tuple[Diagnostic, ...] = ()  # every finding so far, after policy
    # incremental wiring (the build): trace Forme, reusing the last build's memo
    traced: bool = False
    wiring: Wiring | None = None  # in: the last build's memo; out: this wiring's memo
    checks: CheckMemo | None = None  # each file's contract-rule findings, kept (the build)


PassFn = Callable[[Unit], tuple[Unit, list[Diagnostic]]]


@value
class Pass:
    name: str
    run: PassFn
    gate: bool = False  # a gate runs nothing; it stops the pipeline when errors exist


def _check(unit: Unit) -> tuple[Unit, list[Diagnostic]]:
    return unit, check_project(unit.project, unit.focus, unit.checks)


def _tools(unit: Unit) -> tuple[Unit, list[Diagnostic]]:
    if unit.host is None or unit.config.offline_tools:
        return unit, []
    from .passes import tools

    found, checks = tools.run(unit.project, unit.host)
    return replace(unit, host_checks=checks), found


def _patterns(unit: Unit) -> tuple[Unit, list[Diagnostic]]:
    project, found = patterns.run(unit.project)
    return replace(unit, project=project), found


def _forme(unit: Unit) -> tuple[Unit, list[Diagnostic]]:
    if unit.traced:
        topology, found, memo = forme.wire(unit.project, unit.config, unit.wiring, traced=True)
        return replace(unit, topology=topology, wiring=memo), found
    topology, found = forme.run(unit.project, unit.config)
    return replace(unit, topology=topology), found


def _canonicalize(unit: Unit) -> tuple[Unit, list[Diagnostic]]:
    assert unit.topology is not None
    lowering = unit.lowering
    if lowering is None and unit.wiring is not None:
        lowering = unit.wiring.lowering(canonicalize.lower)
    specs, found = canonicalize.run(unit.topology, lowering)
    return replace(unit, specs=specs), found


def _tests(unit: Unit) -> tuple[Unit, list[Diagnostic]]:
    from .passes import tests

    plans, found = tests.run(unit.project, unit.topology, unit.specs)
    return replace(unit, tests=plans), found


def _postconditions(unit: Unit) -> tuple[Unit, list[Diagnostic]]:
    assert unit.topology is not None
    from .passes import postconditions

    memo = unit.wiring  # an unchanged contract's validator, as the last build made it
    compile_node = postconditions.compile_node if memo is None else memo.validators()
    return replace(unit, validators=postconditions.run(unit.topology, compile_node)), []


def _fingerprint(unit: Unit) -> tuple[Unit, list[Diagnostic]]:
    assert unit.topology is not None
    from .passes import fingerprint

    memo = unit.wiring  # an unchanged contract's fingerprint, as the last build made it
    of = fingerprint.fingerprint if memo is None else memo.fingerprints()
    return replace(unit, fingerprints=fingerprint.run(unit.topology, of)), []


def _emit(unit: Unit) -> tuple[Unit, list[Diagnostic]]:
    from .codegen import intent

    assert unit.topology is not None
    document = intent.emit(
        unit.project,
        unit.topology,
        unit.specs,
        unit.validators,
        unit.fingerprints,
        unit.diagnostics,
    )
    return replace(unit, intent=document), []


def _validate(unit: Unit) -> tuple[Unit, list[Diagnostic]]:
    """A generated intent that breaks a semantic rule is a prosec bug, never written.

    The JSON Schema is not checked here (nor the spec of an unchanged contract, see
    below): the emitter builds what the schema describes
    (tests check every corpus program's intent against it), and every reader checks it
    where a document can be wrong: `prosec validate`, `prosec activate`, and `prosec
    run`, once per manifest content."""
    from prosec.runtime.intent_check import iter_problems

    # a canonicalizer spec the last build made of the same contract parsed then (the
    # build is written only when it validates): it is not parsed again
    known = frozenset() if unit.wiring is None else unit.wiring.reused.get("lower", set())
    found = tuple(str(p) for p in iter_problems(unit.intent, schema=False, specs_known=known))
    if not found:
        return replace(unit, validated=True), []
    origin = unit.project.files[0].path if unit.project.files else "<project>"
    return replace(unit, problems=found), [
        diag.make(
            "internal_error",
            f"prosec emitted an invalid compiled intent ({found[0]}); please report it",
            Span(path=origin, line=1, column=1, end_line=1, end_column=1),
        )
    ]


PIPELINE: tuple[Pass, ...] = (
    Pass("check", _check),
    Pass("tools", _tools),
    Pass("patterns", _patterns),
    Pass("forme", _forme),
    Pass("canonicalize", _canonicalize),
    Pass("tests", _tests),
    Pass("postconditions", _postconditions),
    Pass("fingerprint", _fingerprint),
    Pass("emit", _emit),
    Pass("errors", lambda unit: (unit, []), gate=True),
    Pass("validate", _validate),
)


# Everything the build knows about a project before it emits: what `prosec lint` and
# the language server ask for (host lookups stay with the build: they have no host)
ANALYSIS = ("check", "tools", "patterns", "forme", "canonicalize", "tests")
# the part of ANALYSIS that needs the whole project wired
WIRING = ("patterns", "forme", "canonicalize")


def select(*names: str) -> tuple[Pass, ...]:
    """A slice of PIPELINE, in pipeline order (sqlglot's `optimize(…, rules=…)`): lint
    and the language server run these passes instead of composing their own."""
    unknown = sorted(set(names) - {step.name for step in PIPELINE})
    if unknown:
        raise ValueError(f"no pass named {', '.join(unknown)} in the pipeline")
    return tuple(step for step in PIPELINE if step.name in names)


def run_pipeline(
    unit: Unit, progress: Progress | None = None, passes: Sequence[Pass] = PIPELINE
) -> Unit:
    """Run `passes` (default: all) in order; a gate stops the run once any error is known.

    The unit's diagnostics are kept deduplicated and sorted: once here, then merged again
    only after a pass that found something (never re-sorted by a pass that found none)."""
    unit = replace(unit, diagnostics=_merged(unit.diagnostics, ()))
    for index, step in enumerate(passes):
        if progress is not None:
            progress(step.name, index, len(passes))
        if step.gate:
            cyclic = unit.topology is not None and not unit.topology.acyclic
            if diag.has_errors(unit.diagnostics) or cyclic:
                break
            continue
        try:
            unit, found = step.run(unit)
        except Exception as exc:  # a bug in a pass: report it, never a traceback
            found = [_internal(unit.project, step.name, exc)]
            unit = replace(unit, diagnostics=(*unit.diagnostics, *found))
            break
        policed = apply_policy(found, unit.config)
        if policed:
            unit = replace(unit, diagnostics=_merged(unit.diagnostics, policed))
    return unit


def _merged(known: Sequence[Diagnostic], found: Sequence[Diagnostic]) -> tuple[Diagnostic, ...]:
    return tuple(sorted({*known, *found}, key=Diagnostic.sort_key))


def analyse(
    project: Project,
    config: Config,
    *,
    wired: Collection[str] | None = None,
    lowering: Lowering | None = None,
    focus: Collection[str] | None = None,
) -> Unit:
    """What `prosec lint` and the language server know about one parsed project: the
    build's checks over every file, then its wiring passes (patterns, Forme, lowering)
    over the files the build compiles (`wired`, display paths; None: every file).

    The returned unit holds every file, the wired ones as pattern expansion left them,
    and no topology when nothing is wired. With `focus` (display paths) only those files'
    contracts are checked: the others are context, and their findings are not wanted."""
    start = Unit(project=project, config=config, focus=None if focus is None else frozenset(focus))
    checked = run_pipeline(start, passes=select("check", "tools"))
    if wired is None:
        subset = project
    else:
        subset = Project(files=tuple(f for f in project.files if f.path in wired))
    if not subset.files:
        return run_pipeline(checked, passes=select("tests"))
    unit = run_pipeline(replace(checked, project=subset, lowering=lowering), passes=select(*WIRING))
    expanded = {f.path: f for f in unit.project.files}
    unit = replace(
        unit, project=Project(files=tuple(expanded.get(f.path, f) for f in project.files))
    )
    # tests outside the build's sources are checked against its wiring
    return run_pipeline(unit, passes=select("tests"))


@value(kw_only=True)
class CompileResult:
    """The outcome of one compile: the intent (even when errors keep it from disk)."""

    unit: Unit
    files: int
    reparsed: int

    @property
    def intent(self) -> dict[str, Any] | None:
        return self.unit.intent

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return self.unit.diagnostics

    @property
    def has_errors(self) -> bool:
        return diag.has_errors(self.unit.diagnostics)

    @property
    def writable(self) -> bool:
        """No error, an acyclic topology, and an intent that passed validation."""
        return self.unit.validated and not self.has_errors

    @property
    def internal(self) -> bool:
        return any(d.code == "internal_error" for d in self.unit.diagnostics)


def source_root(root: Path, config: Config) -> Path:
    """`[build] source`, else `ROOT/src` when it exists, else ROOT itself."""
    if config.source:
        return root / config.source
    return root / "src" if (root / "src").is_dir() else root


def compile_project(
    root: Path,
    config: Config,
    *,
    host: Host | None = None,
    cache: ParseCache | None = None,
    progress: Progress | None = None,
) -> CompileResult:
    """Discover, read, parse (reusing cached files), load dependencies from deps/ and run
    PIPELINE for one project."""
    texts, unreadable = read_sources(root, config)
    return compile_texts(
        texts,
        config,
        host=host,
        cache=cache,
        progress=progress,
        extra=unreadable,
        imports=importer(root),
    )


def importer(root: Path) -> Importer:
    """Dependency loading for a build of ROOT (display paths relative to it)."""

    def run(project: Project) -> tuple[Project, Sequence[Diagnostic]]:
        from .deps import load_from_disk

        loaded = load_from_disk(project, root, root)
        return loaded.project, loaded.diagnostics

    return run


def read_sources(root: Path, config: Config) -> tuple[list[tuple[str, str]], list[Diagnostic]]:
    """(display path, text) of every source, and a diagnostic per unreadable file (an info
    when there is no source at all: the empty project builds the empty manifest) and per
    legacy `.prose` program among the sources (`legacy_program`, as `prosec lint` says:
    it is not compiled, `prosec upgrade` migrates it)."""
    texts: list[tuple[str, str]] = []
    unreadable: list[Diagnostic] = []
    sources = source_root(root, config)
    refs = discover([sources], root, legacy=True)
    for ref in refs:
        text, problem = read_source(ref)
        if problem is not None:
            unreadable.append(problem)
        elif text is not None and ref.display.endswith(LEGACY_SUFFIX):
            unreadable.append(legacy_program(ref.display, text))
        elif text is not None:
            texts.append((ref.display, text))
    if not [ref for ref in refs if not ref.display.endswith(LEGACY_SUFFIX)]:
        where = display_path(sources, root)
        unreadable.append(
            diag.make(
                "sources_empty",
                f"no `{SUFFIX}` sources under `{where}`: the compiled intent has no nodes",
                Span(path=where, line=1, column=1, end_line=1, end_column=1),
            )
        )
    return texts, unreadable


def compile_texts(
    texts: Sequence[tuple[str, str]],
    config: Config,
    *,
    host: Host | None = None,
    cache: ParseCache | None = None,
    progress: Progress | None = None,
    extra: Sequence[Diagnostic] = (),
    imports: Importer | None = None,
    wiring: Wiring | None = None,
    traced: bool = False,
    checks: CheckMemo | None = None,
) -> CompileResult:
    """Compile (display path, text) pairs: no discovery and no I/O except host lookups and
    `imports` (dependency loading, when given). With `traced`, the result's unit holds
    the memo of its wiring, and `wiring` (the last one) spares re-resolving the needs no
    change reaches; `checks` keeps each file's contract-rule findings (the output is the
    same either way)."""
    project, found, reparsed = _parse(texts, cache)
    if imports is not None:
        project, imported = imports(project)
        found = [*found, *imported]
    unit = Unit(
        project=project,
        config=config,
        host=host,
        diagnostics=tuple(apply_policy([*extra, *found], config)),
        traced=traced,
        wiring=wiring,
        checks=checks,
    )
    return CompileResult(unit=run_pipeline(unit, progress), files=len(texts), reparsed=reparsed)


def _parse(
    texts: Sequence[tuple[str, str]], cache: ParseCache | None
) -> tuple[Project, list[Diagnostic], int]:
    reused: dict[str, tuple[SourceFile, list[Diagnostic]]] = {}
    digests = {path: text_digest(text) for path, text in texts}
    if cache is not None:
        for path, text in texts:
            hit = cache.get(path, digests[path], text)
            if hit is not None:
                reused[path] = hit
    fresh = [(path, text) for path, text in texts if path not in reused]
    project, found = parse_texts(fresh)
    if cache is not None:
        by_path: dict[str, list[Diagnostic]] = {}  # one pass: never files × diagnostics
        for d in found:
            by_path.setdefault(d.span.path, []).append(d)
        for source in project.files:
            cache.put(source.path, digests[source.path], source, by_path.get(source.path, []))
    files = sorted([*project.files, *(hit[0] for hit in reused.values())], key=lambda f: f.path)
    found += [d for hit in reused.values() for d in hit[1]]
    return Project(files=tuple(files)), found, len(fresh)


def _internal(project: Project, name: str, exc: BaseException) -> Diagnostic:
    origin = project.files[0].path if project.files else "<project>"
    return diag.make(
        "internal_error",
        f"prosec failed in the {name} pass ({type(exc).__name__}: {exc}); please report it",
        Span(path=origin, line=1, column=1, end_line=1, end_column=1),
    )
