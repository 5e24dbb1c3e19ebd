"""The build driver: compile with the cache, recognize no-op rebuilds, write atomically."""

from __future__ import annotations

import gc
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prosec.runtime import provenance
from prosec.runtime.fsio import atomic_write_bytes, remove_leftovers

from . import diagnostics as diag
from .cache import BuildCache, LastBuild, input_key
from .codegen import intent as intent_mod
from .config import Config
from .diagnostics import Diagnostic
from .host import Host
from .passes import tools
from .pipeline import CompileResult, Progress, compile_texts, importer, read_sources

NEXT = "manifest.next.json"
ACTIVE = "manifest.active.json"


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildOptions:
    check: bool = False  # compare with dist/manifest.next.json instead of writing
    emit_artifacts: bool = False
    cache_dir: Path | None = None  # the base of build caches (the CLI's choice); None: none


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildOutcome:
    """What happened: `written`, `up-to-date`, `fresh`/`stale` (--check), `failed`, `internal`."""

    status: str
    diagnostics: tuple[Diagnostic, ...]
    note: str  # how much was rebuilt, and why
    summary: dict[str, int] = field(default_factory=dict)
    written: tuple[str, ...] = ()
    result: CompileResult | None = None


def build(
    root: Path,
    config: Config,
    host: Host | None,
    options: BuildOptions,
    progress: Progress | None = None,
) -> BuildOutcome:
    """Compile ROOT and write its manifest (see BuildOutcome for what can happen).

    The cyclic garbage collector is paused meanwhile: a build allocates millions of
    small immutable IR values and frees them together, and each collection would walk
    them all again (a fifth of a cold build's time at 1,000 contracts)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return _build(root, config, host, options, progress)
    finally:
        if paused:
            gc.enable()


def _build(
    root: Path,
    config: Config,
    host: Host | None,
    options: BuildOptions,
    progress: Progress | None,
) -> BuildOutcome:
    dist = root / intent_mod.DIST
    texts, unreadable = read_sources(root, config)
    # what read_sources said of the files it could not compile (unreadable, legacy) is
    # an input too: a `.prose` program added or removed changes the build's findings
    said = [(f"\0{d.span.path}\0{d.code}", d.message) for d in unreadable]
    key = input_key(texts + said, config)
    cache = None if options.cache_dir is None else BuildCache.open(options.cache_dir, root, config)
    up_to_date = _no_op(root, cache, key, dist, config, host, options)
    if up_to_date is not None:
        return up_to_date
    result = compile_texts(
        texts,
        config,
        host=host,
        cache=cache,
        progress=progress,
        extra=unreadable,
        imports=importer(root),
        wiring=None if cache is None else cache.last_wiring(),
        traced=cache is not None,
        checks=None if cache is None else cache.checks,
    )
    note = _note(cache, result, options)
    summary = _summary(result)
    if result.internal:
        return BuildOutcome(
            status="internal", diagnostics=result.diagnostics, note=note, result=result
        )
    if not result.writable or result.intent is None:
        return BuildOutcome(
            status="failed",
            diagnostics=result.diagnostics,
            note=note,
            summary=summary,
            result=result,
        )
    data = intent_mod.dumps(result.intent)
    manifest = dist / NEXT
    if options.check:
        current = manifest.read_bytes() if manifest.is_file() else None
        status = "fresh" if current == data else "stale"
        return BuildOutcome(
            status=status, diagnostics=result.diagnostics, note=note, summary=summary, result=result
        )
    remove_leftovers(dist)  # what a build killed mid-write left (its process is gone)
    # the sources as compiled, for the runs of this manifest (runtime/provenance.py)
    compiled = [(source.path, source.text) for source in result.unit.project.files]
    provenance.write_snapshot(dist, data, compiled)
    written = [write_atomic(manifest, data)]
    if options.emit_artifacts:
        written += _artifacts(dist, result.intent)
    if cache is not None:
        cache.last = LastBuild(
            key=key,
            output_sha=hashlib.sha256(data).hexdigest(),
            host_checks=result.unit.host_checks,
            diagnostics=result.diagnostics,
            summary=summary,
            imports=_imported(root, result),
        )
        cache.wiring = result.unit.wiring
        unsaved = cache.save({path for path, _ in texts})
        note = f"{note}; {unsaved}" if unsaved else note
    return BuildOutcome(
        status="written",
        diagnostics=result.diagnostics,
        note=note,
        summary=summary,
        written=tuple(p.relative_to(root).as_posix() for p in written),
        result=result,
    )


def _no_op(
    root: Path,
    cache: BuildCache | None,
    key: str,
    dist: Path,
    config: Config,
    host: Host | None,
    options: BuildOptions,
) -> BuildOutcome | None:
    """The last build's output is current: same inputs, same file, same host lookups."""
    if cache is None or cache.last is None or cache.last.key != key:
        return None
    manifest = dist / NEXT
    if not manifest.is_file():
        return None
    data = manifest.read_bytes()
    if hashlib.sha256(data).hexdigest() != cache.last.output_sha:
        return None
    if not options.check and not provenance.snapshot_current(dist, data):
        return None  # the sources as compiled are missing: write them again
    if options.emit_artifacts and not (dist / "canonicalizers").is_dir():
        return None
    if any(_digest(root / path) != digest for path, digest in cache.last.imports):
        return None  # a dependency changed (`prosec install --update`) or went missing
    if (
        host is not None
        and not config.offline_tools
        and not tools.repeat(host, cache.last.host_checks)
    ):
        return None
    status = "fresh" if options.check else "up-to-date"
    return BuildOutcome(
        status=status,
        diagnostics=cache.last.diagnostics,
        note="nothing changed since the last build",
        summary=dict(cache.last.summary),
    )


def _imported(root: Path, result: CompileResult) -> tuple[tuple[str, str], ...]:
    """(display path, content digest) of each dependency file the build read."""
    return tuple(
        (source.path, _digest(root / source.path))
        for source in result.unit.project.files
        if source.dependency is not None
    )


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def _note(cache: BuildCache | None, result: CompileResult, options: BuildOptions) -> str:
    if cache is None:
        return "full build (--no-cache)"
    if cache.reason:
        return f"full build: {cache.reason}"
    if result.reparsed == result.files:
        return "full build: every source changed"
    wiring = result.unit.wiring
    rewired = "" if wiring is None else f", re-wired {wiring.resolved} of {wiring.needs} needs"
    return f"incremental build: reparsed {result.reparsed} of {result.files} files{rewired}"


def _summary(result: CompileResult) -> dict[str, int]:
    topology = result.unit.topology
    counts = {s.value: 0 for s in diag.Severity}
    for d in result.diagnostics:
        counts[d.severity.value] += 1
    return {
        "files": result.files,
        "nodes": len(topology.nodes) if topology else 0,
        "edges": len(topology.edges) if topology else 0,
        **counts,
    }


def _artifacts(dist: Path, document: dict[str, Any]) -> list[Path]:
    """The per-node spec and validator files, each schema-checked, stale ones removed."""
    from .codegen.schemas import problems

    written: list[Path] = []
    for section, key, schema in (
        ("canonicalizers", "spec", "canonicalizer-spec"),
        ("postconditions", "validator", "validator"),
    ):
        directory = dist / section
        keep = set()
        for entry in document[section]:
            value = entry[key]
            found = problems(schema, value)
            if found:  # the intent validated, so this is a prosec bug
                raise ValueError(f"{section}/{entry['node']}: {found[0]}")
            path = dist.parent / entry["artifact"]
            keep.add(path.name)
            data = (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
            written.append(write_atomic(path, data))
        if directory.is_dir():
            for stale in directory.glob("*.json"):
                if stale.name not in keep:
                    stale.unlink()
    return written


def write_atomic(path: Path, data: bytes) -> Path:
    """Write `path` atomically and durably (the runtime's one atomic writer); return it."""
    atomic_write_bytes(path, data)
    return path
