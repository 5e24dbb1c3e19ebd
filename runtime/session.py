"""One runtime session: open a project, bind inputs, start / resume runs, recover commits.

This is the I/O driver between the CLI and the engine: it loads prose.toml and the
compiled intent, resolves every node's render before anything runs, takes the runner
lock, rolls forward interrupted commits, creates run directories and writes their
end markers.
"""

from __future__ import annotations

import datetime as dt
import json
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .backends import Backend, open_backend
from .cadence import Cadence, is_due, parse_cadence
from .canonical import canonical_json
from .config import RunConfig, load_config
from .delegation import Delegates
from .executor import Engine, EngineOptions, Event, RunSummary
from .fsio import atomic_write_text
from .intent import Intent, load_intent
from .keys import caller_key, clock_key, external_key
from .protocol import RunStatus, WakeSource, is_queued_wake, wake_problem
from .provenance import ProvenanceError, load_snapshot
from .reconciler import Wake
from .recovery import recover
from .renders import BindingError, Renderer, make_renderer, resolve_binding, template_of
from .runs import RunDir, new_run_id, resolve_run, utc_now

__all__ = ["Project", "SessionError", "open_compiled", "open_project"]

MANIFEST = Path("dist/manifest.active.json")
CACHE = Path("state/.cache")


class SessionError(RuntimeError):
    """A user-facing failure to start or continue a run (exit code 2 unless noted)."""


@dataclass(slots=True, kw_only=True)
class Project:
    """An OpenProse root with its config, compiled intent, backend and renders."""

    root: Path
    config: RunConfig
    intent: Intent
    backend: Backend
    renderers: dict[str, Renderer] = field(default_factory=dict)
    providers: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    invoked: str | None = None  # the source `prosec run FILE` named (the runs' `root:`)
    delegates: Delegates = field(default_factory=lambda: Delegates(renderers={}, unbound={}))
    # the compiled sources of the runs this session created (run id → path → bytes, or
    # None: copied from the project), snapshotted into a run before its first render
    compiled: dict[str, Mapping[str, bytes] | None] = field(default_factory=dict)

    def bind_renders(self, cli: Mapping[str, Mapping[str, Any]]) -> None:
        """Resolve every node's render now, so a missing binding fails before anything runs."""
        problems = []
        for node, spec in self.intent.nodes.items():
            try:
                binding = resolve_binding(
                    node,
                    cli=cli,
                    config_nodes=self.config.render_nodes,
                    intent_render=spec.render,
                    config_default=self.config.render_default,
                )
                self.renderers[node] = make_renderer(binding, self.root)
                self.providers[node] = binding.kind
            except BindingError as exc:
                problems.append(str(exc))
        declared = sorted(
            {
                d
                for spec in self.intent.nodes.values()
                for d in (spec.runtime or {}).get("delegates", ())
            }
        )
        renderers: dict[str, Renderer] = {}
        unbound: dict[str, str] = {}
        for name in declared:  # a delegate without a binding fails only the render using it
            try:
                binding = resolve_binding(
                    name,
                    cli=cli,
                    config_nodes=self.config.render_nodes,
                    intent_render=None,
                    config_default=self.config.render_default,
                )
                renderers[name] = make_renderer(binding, self.root)
            except BindingError as exc:
                unbound[name] = str(exc).replace("node ", "delegate ", 1)
        self.delegates = Delegates(renderers=renderers, unbound=unbound)
        known = {
            *self.intent.nodes,
            *(template_of(n) for n in self.intent.nodes),
            *declared,
            "*",
        }
        unknown = sorted(set(cli) - known)
        unknown += sorted(set(self.config.render_nodes) - known)
        for name in unknown:
            problems.append(
                f"render bound for {name!r}, which is not a node of the compiled intent"
            )
        if problems:
            raise SessionError("\n".join(problems))

    def cadence(self, node: str) -> Cadence | None:
        text = self.intent.nodes[node].cadence or self.config.cadence.get(node)
        if text is None:
            return None
        try:
            return parse_cadence(text)
        except ValueError as exc:
            raise SessionError(f"node {node!r}: {exc}") from exc

    def due_nodes(self, now: dt.datetime) -> list[str]:
        due = []
        for node in self.intent.order:
            cadence = self.cadence(node)
            if cadence is None:
                continue
            clock = self.backend.get_value(clock_key(node))
            last = dt.datetime.fromisoformat(clock["last_render"]) if clock else None
            if is_due(cadence, last, now):
                due.append(node)
        return due

    # -- lock and recovery --------------------------------------------------------------

    def recover(self) -> list[str]:
        """Kill renders an interrupted runner left running, then roll forward commits a
        crash interrupted; returns the nodes recovered (recovery.py)."""
        return recover(
            self.root,
            self.backend,
            self.warnings,
            manifest=self.root / MANIFEST,
            cache=self.root / CACHE,
        )

    # -- runs -------------------------------------------------------------------------------

    def engine(self, options: EngineOptions) -> Engine:
        return Engine(
            root=self.root,
            intent=self.intent,
            backend=self.backend,
            renderers=self.renderers,
            providers=self.providers,
            options=options,
            delegates=self.delegates,
            before_renders=self.snapshot_sources,
        )

    def snapshot_sources(self, run: RunDir) -> None:
        """Snapshot the sources into `run` unless it holds them (the engine calls this
        before a run's first render: a run that renders nothing copies nothing)."""
        if run.has_sources():
            return
        sources = self.intent.source_paths()
        if run.run_id in self.compiled:
            compiled = self.compiled[run.run_id]
        else:  # a run this session resumes
            try:
                snapshot = load_snapshot(self.root, self.intent.digest, sources)
            except ProvenanceError as exc:
                raise SessionError(str(exc)) from None
            compiled = snapshot.texts if snapshot is not None else None
        run.add_sources(self.root, sources, compiled)

    def create_run(
        self,
        kind: str,
        wakes: Iterable[Mapping[str, Any]],
        upstream: list[str],
        *,
        run_id: str | None = None,
        taken: Iterable[str] = (),
        inputs: Mapping[str, str] | None = None,
        root_source: str | None = None,
    ) -> RunDir:
        """Create the run folder whole (its wakes, the inbox ids they came from and the
        caller inputs in run.json, so `prosec resume` needs nothing else)."""
        sources = self.intent.source_paths()
        # resolution is disk-only: a dependency the build read must still be installed
        missing = [s for s in sources if s.startswith("deps/") and not (self.root / s).is_file()]
        if missing:
            raise SessionError(
                f"{missing[0]}: a dependency of the compiled intent is not installed "
                f"({len(missing)} file{'s' if len(missing) != 1 else ''} missing from deps/); "
                "run `prosec install`"
            )
        try:
            snapshot = load_snapshot(self.root, self.intent.digest, sources)
        except ProvenanceError as exc:
            raise SessionError(str(exc)) from None
        if snapshot is not None:
            self.warnings.extend(snapshot.warnings)
        root_source = root_source or self.invoked or _root_source(sources)
        title = next(
            (
                str(s.get("name"))
                for s in self.intent.raw.get("sources", [])
                if s.get("path") == root_source and s.get("name")
            ),
            self.root.resolve().name,
        )
        # run ids sort by second only; started_ns orders runs created within one second
        info: dict[str, Any] = {
            "kind": kind,
            "wakes": list(wakes),
            "backend": self.backend.name,
            "started_ns": time.time_ns(),
        }
        taken = list(taken)
        if taken:
            info["taken"] = taken
        if inputs:
            info["inputs"] = dict(sorted(inputs.items()))
        if snapshot is not None and snapshot.edited:
            info["sources_edited"] = list(snapshot.edited)  # run with the compiled text
        runs_dir = None
        if self.backend.ephemeral:
            # nothing durable: the run's files live in a temporary folder
            runs_dir = Path(tempfile.mkdtemp(prefix="prosec-in-context-"))
        run = RunDir.create(
            self.root,
            run_id or new_run_id(),
            runs_dir=runs_dir,
            intent_bytes=canonical_json(dict(self.intent.raw)) + b"\n",
            sources=sources,
            root_source=root_source,
            title=title,
            upstream=upstream,
            info=info,
            compiled=snapshot.texts if snapshot is not None else None,
            lazy=False,  # test_e2e_provenance reads sources/ of a run that renders nothing
        )
        self.compiled[run.run_id] = snapshot.texts if snapshot is not None else None
        self.track_start(run)
        return run

    def track_start(self, run: RunDir, *, resumed: bool = False) -> None:
        """Register the run in the backend's run table (running; root path, source and
        metadata filled) where it has one."""
        state = self.backend.run_state
        if state is None:
            return
        root_source = _root_source(self.intent.source_paths())
        copy = run.path / "root.prose.md"
        info = run.info()
        state.start_run(
            run.run_id,
            root_path=str(self.root / root_source) if root_source else None,
            root_source=copy.read_text(encoding="utf-8", errors="replace")
            if copy.is_file()
            else None,
            metadata={
                "kind": str(info.get("kind", "")),
                "wakes": sorted({str(w.get("node")) for w in info.get("wakes", [])}),
            },
            resumed=resumed,
        )

    def bind_caller(
        self, run: RunDir, given: Mapping[str, str], log_from: int, *, log: bool = True
    ) -> int:
        """Write world-model/caller/{name}.md for every declared input; log new bindings
        (`log=False` when `prosec resume` binds a run's recorded inputs again)."""
        declared = self.intent.caller_inputs()
        unknown = sorted(set(given) - set(declared))
        if unknown:
            names = ", ".join(sorted(declared)) or "none"
            raise SessionError(f"--input {unknown[0]}: no node declares it (declared: {names})")
        event = log_from
        for name, item in sorted(declared.items()):
            if name in given:
                binding = self._binding(item.type, name, given[name])
                self.backend.put_value(caller_key(name), binding)
            stored = self.backend.get_value(caller_key(name))
            if stored is None:
                continue
            atomic_write_text(run.path / "world-model" / "caller" / f"{name}.md", stored["text"])
            if name in given and log:
                event += 1
                run.log(f"{event}→ [input] {name} ✓")
        return event

    def _binding(self, kind: str, name: str, value: str) -> dict[str, Any]:
        if kind == "text":
            text = f"# {name}\n\nbinding: input\nsource: caller\n\n---\n\n{value}\n"
            return {"fingerprinted": {"type": "text", "value": value}, "text": text}
        refs = (
            [ref.strip() for ref in value.split(",") if ref.strip()] if kind == "run[]" else [value]
        )
        if kind == "run" and len(refs) != 1:
            raise SessionError(f"--input {name}: a `run` input takes exactly one run reference")
        entries = []
        for ref in refs:
            try:
                path = resolve_run(self.root, ref)
            except (OSError, ValueError) as exc:
                raise SessionError(f"--input {name}: {exc}") from exc
            other = RunDir(path)
            status = {"complete": "complete", "failed": "failed"}.get(
                other.finished() or "", "incomplete"
            )
            root = _root_of(other)
            self._stale_check(other, root)
            entries.append({"run": path.name, "path": str(path), "root": root, "status": status})
        header = f"# {name}\n\nbinding: input\nsource: caller\ntype: {kind}\n\n---\n\n"
        if kind == "run":
            e = entries[0]
            body = f"run: {e['run']}\npath: {e['path']}\nroot: {e['root']}\nstatus: {e['status']}\n"
        else:
            body = "\n".join(
                f"- run: {e['run']}\n  path: {e['path']}\n"
                f"  root: {e['root']}\n  status: {e['status']}\n"
                for e in entries
            )
        fingerprinted = [{k: e[k] for k in ("run", "root", "status")} for e in entries]
        return {"fingerprinted": {"type": kind, "value": fingerprinted}, "text": header + body}

    def _stale_check(self, other: RunDir, root: str) -> None:
        try:
            theirs = json.loads((other.path / "compiled-intent.json").read_bytes())
        except (OSError, json.JSONDecodeError):
            return
        mine = self.intent.raw.get("contract_fingerprints", {})
        old = theirs.get("contract_fingerprints", {}) if isinstance(theirs, dict) else {}
        changed = sorted(n for n in set(mine) & set(old) if mine[n] != old[n])
        if changed:
            self.warnings.append(
                f"[Warning] Stale run: {other.run_id}\n"
                f"  Root source '{root}' has changed since this run "
                f"(contracts changed: {', '.join(changed)})."
            )

    def upstream_runs(self, given: Mapping[str, str]) -> list[str]:
        """Run ids bound through run-typed caller inputs (the vm.log `upstream:` line)."""
        declared = self.intent.caller_inputs()
        ids: list[str] = []
        for name, value in sorted(given.items()):
            item = declared.get(name)
            if item is None or item.type == "text":
                continue
            for ref in value.split(",") if item.type == "run[]" else [value]:
                try:
                    run_id = resolve_run(self.root, ref.strip()).name
                except (OSError, ValueError) as exc:
                    raise SessionError(f"--input {name}: {exc}") from exc
                if run_id not in ids:
                    ids.append(run_id)
        return ids

    def resume_plan(self, run: RunDir) -> tuple[set[str], dict[str, Wake]]:
        """Pending nodes and wakes of an interrupted run, re-derived from its ledgers."""
        info = run.info()
        pending: set[str] = set()
        wakes: dict[str, Wake] = {}
        woken: list[str] = []
        for item in info.get("wakes", []):
            node = str(item.get("node"))
            if node not in self.intent.nodes:
                continue
            woken.append(node)
            if not is_queued_wake(item):
                raise SessionError(
                    f"run {run.run_id}: a wake of {node!r} is malformed: {wake_problem(item)}"
                )
            if _consumed(run.receipts(node), item):
                continue  # consumed before the crash
            if item["source"] == WakeSource.EXTERNAL and "data" in item:
                # the crash may have come before the trigger data was stored
                self.backend.put_value(external_key(node), {"data": item["data"]})
            wake = Wake(source=item["source"], refs=item.get("refs", []))
            wakes[node] = wakes[node].merge(wake) if node in wakes else wake
            pending.add(node)
        if info.get("kind") == "run":
            pending.update(self.intent.order)
        else:
            for node in woken:
                mask = self.intent.descendants[node]
                pending.update(n for n in self.intent.order if mask >> self.intent.index[n] & 1)
        return pending, wakes

    def finish(self, run: RunDir, summary: RunSummary) -> None:
        if self.backend.run_state is not None:
            status = RunStatus.FAILED if summary.failed else RunStatus.COMPLETED
            self.backend.run_state.end_run(run.run_id, status)
        if summary.failed:
            names = ", ".join(node for node, _, _ in summary.failed)
            run.log(f"---error {utc_now()} {len(summary.failed)} failed: {names}")
        else:
            run.log(f"---end {utc_now()}")


def _consumed(receipts: list[dict[str, Any]], item: Mapping[str, Any]) -> bool:
    """A recorded wake was consumed when a receipt of the run carries its refs (any
    receipt of the node, for a wake without refs)."""
    refs = set(item.get("refs", []))
    if not refs:
        return bool(receipts)
    for receipt in receipts:
        wake = receipt.get("wake")
        if isinstance(wake, dict) and refs <= set(wake.get("refs") or []):
            return True
    return False


def _root_source(sources: list[str]) -> str | None:
    index = sorted((s for s in sources if s.endswith("index.prose.md")), key=len)
    if index:
        return index[0]
    return sorted(sources)[0] if sources else None


def _root_of(run: RunDir) -> str:
    for line in run.log_lines()[:5]:
        if line.startswith("root: "):
            return line[6:].removesuffix(".prose.md")
    return "unknown"


def open_project(
    root: Path,
    *,
    backend: str | None = None,
    env: Mapping[str, str] | None = None,
    manifest: Path | None = None,
) -> Project:
    """Load config and compiled intent and open the backend (no lock taken yet)."""
    root = root.resolve()
    config = load_config(root, env)
    intent = load_intent(root / (manifest or MANIFEST), cache=root / CACHE)
    store = open_backend(backend or config.backend, root, env)
    return Project(root=root, config=config, intent=intent, backend=store)


def open_compiled(
    root: Path,
    raw: Mapping[str, Any],
    *,
    backend: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Project:
    """A project over a compiled intent made in memory (`prosec run FILE`): checked as a
    manifest on disk would be, never written to dist/."""
    from .intent import parse_intent

    root = root.resolve()
    config = load_config(root)
    intent = parse_intent(dict(raw), "the compiled intent of the file")
    store = open_backend(backend or config.backend, root, env)
    return Project(root=root, config=config, intent=intent, backend=store)


__all__ += ["EngineOptions", "Event", "Wake"]
