"""Serving wakes under the runner lock: reconcile, then drain the inbox; resume a cut run.

The runtime half of `prosec run | trigger | tick | resume`: which wakes a command makes,
how a runner takes the state lock, recovers, creates and finishes runs, and serves wakes
other processes queued meanwhile. The CLI parses options, reports, and picks the exit code.
"""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Callable, Mapping
from typing import Any

from .canonical import token
from .executor import EngineOptions, RunSummary, queued_wakes
from .fsio import remove_leftovers, repair_torn_tail
from .inbox import take_inbox
from .keys import external_key
from .protocol import QueuedWake, WakeSource
from .reconciler import Wake
from .runs import RunDir, new_run_id, runs_in_order
from .session import Project, SessionError

__all__ = [
    "LOCK_HELD",
    "clocked_nodes",
    "due_wakes",
    "enqueue_tick",
    "enqueue_trigger",
    "gateways_without_data",
    "interrupted_runs",
    "prune_run_data",
    "reconcile",
    "resume",
    "serve",
    "serve_inbox",
]

LOCK_HELD = "another prosec runner holds this root's state lock; try again later"

OnRun = Callable[[RunDir, RunSummary], None]
OnStart = Callable[[RunDir], None]


def clocked_nodes(project: Project) -> frozenset[str]:
    """The nodes with a cadence (their renders are timed for `--due`)."""
    return frozenset(n for n in project.intent.order if project.cadence(n) is not None)


def due_wakes(project: Project, now: dt.datetime) -> list[QueuedWake]:
    """A self-driven wake for every node whose cadence elapsed by `now`."""
    return [{"node": n, "source": WakeSource.SELF, "refs": []} for n in project.due_nodes(now)]


def enqueue_trigger(
    project: Project, gateway: str, value: Any, *, wake_id: str | None = None
) -> str:
    """Queue an external wake of `gateway` carrying `value`, fingerprinted by its content;
    returns the token. `wake_id` (kept in the run's `run.json`) lets a caller find the
    run that took the wake."""
    node = project.intent.nodes.get(gateway)
    if node is None:
        raise SessionError(f"trigger: {gateway!r} is not a node of the compiled intent")
    if gateway not in project.intent.entry_points and node.wake_source != WakeSource.EXTERNAL:
        raise SessionError(
            f"trigger: {gateway!r} is not a gateway (no entry point, wake_source not external)"
        )
    fingerprint = token(value)
    wake: dict[str, Any] = {
        "node": gateway,
        "source": WakeSource.EXTERNAL,
        "refs": [fingerprint],
        "data": value,
    }
    if wake_id is not None:
        wake["id"] = wake_id
    project.backend.enqueue(wake)
    return fingerprint


def gateways_without_data(project: Project) -> list[str]:
    """The gateways no trigger has given data yet (`prosec run` says so: they render, and
    their subscribers read, an empty truth), in topological order."""
    return [
        node
        for node in project.intent.order
        if node in project.intent.entry_points
        and project.backend.get_value(external_key(node)) is None
    ]


def enqueue_tick(project: Project, node: str) -> None:
    """Queue a self-driven wake of `node`, as its own cadence would."""
    if node not in project.intent.nodes:
        raise SessionError(f"tick: {node!r} is not a node of the compiled intent")
    project.backend.enqueue({"node": node, "source": WakeSource.SELF, "refs": []})


def reconcile(
    project: Project,
    *,
    kind: str,
    wakes: list[QueuedWake],
    all_nodes: bool,
    inputs: Mapping[str, str],
    options: EngineOptions,
    on_start: OnStart | None = None,
) -> tuple[RunDir, RunSummary]:
    """Holding the lock: recover, create the run, bind inputs, reconcile, end the log.
    `on_start` sees the run once it is created (its wakes recorded), before any render."""
    project.recover()
    upstream = project.upstream_runs(inputs)
    run_id = new_run_id()
    created: list[RunDir] = []

    def record(ids: list[str], items: list[dict[str, Any]]) -> None:
        queued = wakes + queued_wakes(items, project.intent.nodes)
        created.append(
            project.create_run(kind, queued, upstream, run_id=run_id, taken=ids, inputs=inputs)
        )

    taken = take_inbox(project.backend, run_id, record)
    if created:
        (run,) = created
    else:
        run = project.create_run(kind, wakes, upstream, run_id=run_id, inputs=inputs)
    wakes = wakes + queued_wakes(taken, project.intent.nodes)
    for wake in wakes:  # after the run records them: `prosec resume` stores them again
        if wake["source"] == WakeSource.EXTERNAL and "data" in wake:
            project.backend.put_value(external_key(wake["node"]), {"data": wake["data"]})
    project.bind_caller(run, inputs, run.last_event())
    if on_start is not None:
        on_start(run)
    engine = project.engine(options)
    pending = set(project.intent.order) if all_nodes else set()
    merged: dict[str, Wake] = {}
    for item in wakes:
        arrived = Wake(source=item["source"], refs=frozenset(item.get("refs", [])))
        node = item["node"]
        merged[node] = merged[node].merge(arrived) if node in merged else arrived
        pending.add(node)
    summary = engine.reconcile(run, pending, merged)
    project.finish(run, summary)
    return run, summary


def serve(
    project: Project,
    *,
    kind: str,
    wakes: list[QueuedWake],
    inputs: Mapping[str, str],
    options: EngineOptions,
    on_run: OnRun,
    on_start: OnStart | None = None,
) -> bool:
    """Run one reconcile, then serve wakes that were queued while we held the lock.

    `on_run` sees each run as it ends. Returns False when another runner holds the lock
    and will take the queued wake; a `run` (kind "run", every node) cannot be queued and
    raises SessionError instead.

    Queuers write their wake first and try the lock second; we release the lock first
    and look at the inbox second, so no queued wake is ever stranded.
    """
    all_nodes = kind == "run"
    if not project.backend.try_lock():
        if all_nodes:
            raise SessionError(LOCK_HELD)
        return False
    try:
        run, summary = reconcile(
            project,
            kind=kind,
            wakes=wakes,
            all_nodes=all_nodes,
            inputs=inputs,
            options=options,
            on_start=on_start,
        )
    finally:
        project.backend.unlock()
    _ended(project, run, summary, on_run)
    while project.backend.try_lock():
        try:
            if not project.backend.inbox():
                break
            run, summary = reconcile(
                project,
                kind="inbox",
                wakes=[],
                all_nodes=False,
                inputs={},
                options=options,
                on_start=on_start,
            )
        finally:
            project.backend.unlock()
        _ended(project, run, summary, on_run)
    return True


def serve_inbox(
    project: Project,
    *,
    options: EngineOptions,
    on_run: OnRun,
    on_start: OnStart | None = None,
) -> bool:
    """Serve what the inbox holds, one run per batch drained, until it is empty (a
    long-running server's loop: no run is created for an empty inbox). False when
    another runner holds the lock: it serves the queued wakes."""
    while True:
        if not project.backend.try_lock():
            return False
        try:
            inbox = project.backend.inbox()
            queued = queued_wakes([w for _, w in inbox], project.intent.nodes)
            if not queued:
                # wakes of nodes an older manifest had: nothing serves them any more
                project.backend.take([wake_id for wake_id, _ in inbox])
                return True
            sources = {str(wake["source"]) for wake in queued}
            kinds = {str(WakeSource.EXTERNAL): "trigger", str(WakeSource.SELF): "tick"}
            kind = kinds.get(sources.pop(), "inbox") if len(sources) == 1 else "inbox"
            run, summary = reconcile(
                project,
                kind=kind,
                wakes=[],
                all_nodes=False,
                inputs={},
                options=options,
                on_start=on_start,
            )
        finally:
            project.backend.unlock()
        _ended(project, run, summary, on_run)


def interrupted_runs(project: Project) -> list[RunDir] | None:
    """The runs a stop or crash cut (no end marker), oldest first; None when another
    runner holds the lock (its own run would look interrupted)."""
    if project.backend.ephemeral:
        return []
    if not project.backend.try_lock():
        return None
    try:
        return [run for run in runs_in_order(project.root / "runs") if run.finished() is None]
    finally:
        project.backend.unlock()


def resume(project: Project, run: RunDir, options: EngineOptions) -> RunSummary:
    """Continue an interrupted run from its ledger, finishing the wave a crash cut."""
    if not project.backend.try_lock():
        raise SessionError(LOCK_HELD)
    try:
        project.recover()
        remove_leftovers(run.path)  # the run is ours now: what its crash left goes
        for torn in [run.path / "vm.log.md", *sorted((run.path / "receipts").glob("*.jsonl"))]:
            repair_torn_tail(torn)
        info = run.info()
        # the caller inputs the run was given, and every stored binding, as a run
        # that was never cut has them in world-model/caller/
        inputs = info.get("inputs")
        given = {str(k): str(v) for k, v in inputs.items()} if isinstance(inputs, dict) else {}
        project.bind_caller(run, given, run.last_event(), log=False)
        project.track_start(run, resumed=True)
        pending, wakes = project.resume_plan(run)
        summary = project.engine(options).reconcile(run, pending, wakes)
        project.finish(run, summary)
    finally:
        project.backend.unlock()
    return summary


def _ended(project: Project, run: RunDir, summary: RunSummary, on_run: OnRun) -> None:
    on_run(run, summary)
    if project.backend.ephemeral:
        # in-context runs keep nothing: drop their temporary run folder once reported
        shutil.rmtree(run.path.parent, ignore_errors=True)


def prune_run_data(project: Project, keep: int) -> list[str] | None:
    """Under the runner lock, delete the seed 004 run data (executions, bindings,
    imports, execution-scoped agents and segments, attachments) of every ended run but
    the `keep` newest (on the filesystem: the VM state logs' rows, statelog.py); the runs
    pruned, or None for a backend that keeps no run data (in-context)."""
    state = project.backend.run_state
    filesystem = project.backend.name == "filesystem"  # its runs' vm/state.jsonl
    if state is None and not filesystem:
        return None
    if not project.backend.try_lock():
        raise SessionError(LOCK_HELD)
    try:
        if state is None:
            from .vm.statelog import prune_states

            return prune_states(project.root / "runs", keep)
        return state.prune(keep)
    finally:
        project.backend.unlock()
