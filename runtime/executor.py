"""Executes reconciler plans: waves of renders (parallel, bounded by --jobs) and their
commits, grouped (groupcommit.py: the renders that finished within a short window
commit together), in the main thread, with crash checkpoints around each step."""

from __future__ import annotations

import concurrent.futures as cf
import functools
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from .agents import AgentMemory, MemoryUnavailable, open_memory, rotate
from .backends.base import Backend
from .canonical import token
from .commit import evaluate, failed, render_cost, skipped
from .delegation import Delegates, render_delegating
from .engine_types import EngineOptions, Event, Job, RunSummary, Wave
from .fsio import disk_full
from .groupcommit import Commit, commit_group
from .inbox import queued_wakes, take_inbox
from .intent import Intent
from .keys import caller_key, clock_key, external_key
from .prepare import changed_inputs, pinned_versions, prepare_render
from .protocol import (
    EventKind,
    Receipt,
    ReceiptStatus,
    SemanticDiff,
    SlotKind,
    WakeSource,
)
from .receipts import build_receipt
from .reconciler import (
    Decision,
    NodeHead,
    Wake,
    decide,
    input_fingerprints,
    input_slots,
    plan_wave,
    subscribers_woken,
)
from .renders import Renderer, RenderOutcome, RenderRequest, cost_problem
from .renders.process import stopped_renders
from .runs import RunDir, utc_now
from .tracking import Tracker

__all__ = [
    "CRASH_POINTS",
    "Engine",
    "EngineOptions",
    "Event",
    "Job",
    "RunSummary",
    "Wave",
    "queued_wakes",
]

# Every point at which the engine calls `EngineOptions.checkpoint`, in commit order: the
# crash tests kill the runner at each one and expect `prosec resume` to finish the run.
CRASH_POINTS = (
    "after-render",
    "after-version",
    "after-pending",
    "after-journal",  # group commit only: the journal is durable
    "after-ledger",
    "after-run-ledger",
    "after-publish",
    "after-log",
    "after-apply",  # group commit only: every commit of the group applied, not synced
    "after-sync",  # group commit only: synced, the journal not yet removed
)
# renders finished within this many seconds of the first uncommitted one commit together
GROUP_WINDOW = 0.5

_MARKS = {ReceiptStatus.RENDERED: "✓ rendered", ReceiptStatus.SKIPPED: "∅ skipped"}


class Engine:
    """Reconciles one run directory against one backend under the runner lock."""

    def __init__(
        self,
        *,
        root: Path,
        intent: Intent,
        backend: Backend,
        renderers: Mapping[str, Renderer],
        providers: Mapping[str, str],
        options: EngineOptions,
        delegates: Delegates | None = None,
        before_renders: Callable[[RunDir], None] = lambda run: None,
        heads: dict[str, NodeHead] | None = None,
    ) -> None:
        self.root = root
        self.intent = intent
        self.backend = backend
        self.renderers = renderers
        self.providers = providers
        self.options = options
        self.before_renders = before_renders  # e.g. snapshot the run's sources (once)
        self._tracker = Tracker(None, "", {})
        self.delegates = delegates or Delegates(renderers={}, unbound={})
        self._memory_problems: dict[str, str] = {}  # node → why its memory cannot be used
        # a worker passes the heads of the nodes one render reads (runtime/workers/)
        self.heads: dict[str, NodeHead] = (
            heads if heads is not None else backend.heads(intent.order)
        )
        self._versions: dict[str, str | None] = {}
        # pinned copies a render wrote into, rebuilt after it: node → repair number
        self._repairs = 0
        self._rebuilt: dict[str, int] = {}

    def version(self, node: str) -> str | None:
        """The node's published ContentAddress (read lazily: most runs render few nodes)."""
        if node not in self._versions:
            self._versions[node] = self.backend.published_version(node)
        return self._versions[node]

    # -- values feeding input slots -----------------------------------------------------

    def caller_tokens(self) -> dict[str, str]:
        tokens: dict[str, str] = {}
        for name in self.intent.caller_inputs():
            value = self.backend.get_value(caller_key(name))
            if value is not None:
                tokens[name] = token({"name": name, **value["fingerprinted"]})
        return tokens

    def external_tokens(self) -> dict[str, str]:
        tokens: dict[str, str] = {}
        for node in self.intent.order:
            if any(s.kind == SlotKind.EXTERNAL for s in input_slots(self.intent, node)):
                value = self.backend.get_value(external_key(node))
                if value is not None:
                    tokens[node] = token(value["data"])
        return tokens

    # -- the reconcile loop --------------------------------------------------------------

    def reconcile(self, run: RunDir, pending: set[str], wakes: dict[str, Wake]) -> RunSummary:
        """Run waves until nothing is pending; wakes queued in the inbox join between waves."""
        summary = RunSummary(run_id=run.run_id)
        self._tracker = Tracker(self.backend.run_state, run.run_id, self.intent.index)
        event = run.last_event()
        caller = self.caller_tokens()
        while True:
            self._drain(run, pending, wakes)
            external = self.external_tokens()

            plan = plan_wave(
                self.intent,
                pending,
                (),
                functools.partial(self._decide, caller=caller, external=external, wakes=wakes),
            )
            skips = []
            for node, decision in plan.skips:
                event += 1
                wake = wakes.pop(node)
                skips.append(self._skip_receipt(node, decision, wake, f"{event}→ {node} ∅ skipped"))
                summary.skipped.append(node)
                pending.discard(node)
            self._commit(run, skips)
            for item in skips:
                self._tracker.settled(item.node, item.receipt["content_hash"])
                self.options.on_event(Event(kind=EventKind.SKIPPED, node=item.node))
            for node in plan.drops:
                pending.discard(node)
                wakes.pop(node, None)
            if not plan.renders:
                if plan.blocked:  # pragma: no cover - plan_wave settles everything when idle
                    raise RuntimeError(f"reconciler stalled on {plan.blocked}")
                return summary
            self.before_renders(run)
            summary.waves += 1
            event += 1
            self.options.on_event(Event(kind=EventKind.WAVE, total=len(plan.renders)))
            jobs = []
            for node, decision in plan.renders:
                pending.discard(node)
                explicit = wakes.pop(node, None)
                derived = self._implicit_wake(node, decision)
                if explicit is None:
                    wake = derived
                elif derived.refs:
                    wake = explicit.merge(derived)
                else:
                    wake = explicit
                if self.options.dispatch is None:
                    request, pinned = self._prepare(run, node, wake)
                else:  # its worker prepares it, from the versions pinned here
                    request, pinned = None, pinned_versions(self, node)
                jobs.append(
                    Job(
                        node=node,
                        decision=decision,
                        wake=wake,
                        request=request,
                        pinned=pinned,
                        seen=self._repairs,
                    )
                )
            self._run_wave(run, jobs, event, summary, pending, wakes)

    def _decide(
        self, node: str, caller: dict[str, str], external: dict[str, str], wakes: dict[str, Wake]
    ) -> Decision:
        spec = self.intent.nodes[node]
        inputs = input_fingerprints(self.intent, node, self.heads, caller, external)
        return decide(
            contract_fingerprint=spec.contract_fingerprint,
            inputs=inputs,
            head=self.heads[node],
            wake=wakes.get(node),
        )

    def _drain(self, run: RunDir, pending: set[str], wakes: dict[str, Wake]) -> None:
        """Take queued wakes (from `prosec trigger` / `tick` while we held the lock)."""
        items = take_inbox(self.backend, run.run_id, lambda ids, got: run.add_wakes(got, ids))
        for item in queued_wakes(items, self.intent.nodes):
            node = item["node"]
            if item["source"] == WakeSource.EXTERNAL and "data" in item:
                self.backend.put_value(external_key(node), {"data": item["data"]})
            wake = Wake(source=item["source"], refs=item.get("refs", []))
            wakes[node] = wakes[node].merge(wake) if node in wakes else wake
            pending.add(node)

    def _implicit_wake(self, node: str, decision: Decision) -> Wake:
        """Why a node renders, derived from the ledger: the rendered receipts of producers
        whose subscribed token differs from the node's last memo (all of them on a cold
        start). Without such a producer the node's own wake source is the cause. The same
        derivation after a crash gives the same receipt as an uninterrupted run."""
        previous = self.heads[node].memo()
        slots = input_slots(self.intent, node)
        old: tuple[str | None, ...] = previous[1] if previous else (None,) * len(slots)
        refs: set[str] = set()
        for slot, was, now in zip(slots, old, decision.memo[1], strict=False):
            if slot.producer is None or was == now:
                continue
            last = self.heads[slot.producer].last
            if last is not None and last["status"] == ReceiptStatus.RENDERED:
                refs.add(str(last["content_hash"]))
        if not refs and self.intent.nodes[node].wake_source != WakeSource.INPUT:
            return Wake(source=self.intent.nodes[node].wake_source)
        return Wake(source=WakeSource.INPUT, refs=frozenset(refs))

    def _run_wave(
        self,
        run: RunDir,
        jobs: list[Job],
        event: int,
        summary: RunSummary,
        pending: set[str],
        wakes: dict[str, Wake],
    ) -> None:
        if self.options.dispatch is not None:
            self.options.dispatch(self, run, jobs, event, Wave(summary, pending, wakes))
            return
        parallel = len(jobs) > 1
        if parallel:
            run.log(f"{event}→ ∥start {','.join(job.node for job in jobs)}")
        letters = iter("abcdefghijklmnopqrstuvwxyz")
        self._tracker.wave([job.node for job in jobs], event)
        with cf.ThreadPoolExecutor(max_workers=self.options.jobs) as pool:
            try:
                futures = {}
                for job in jobs:
                    self.options.on_event(Event(kind=EventKind.START, node=job.node))
                    futures[pool.submit(self._render, job, run, str(event))] = job
                waiting: set[cf.Future[RenderOutcome]] = set(futures)
                batch: list[tuple[Job, RenderOutcome, str]] = []
                since = 0.0
                while waiting:
                    left = max(0.0, since + GROUP_WINDOW - time.monotonic()) if batch else None
                    done, waiting = cf.wait(waiting, left, return_when=cf.FIRST_COMPLETED)
                    for future in sorted(done, key=lambda f: futures[f].node):
                        job = futures[future]
                        outcome = future.result()
                        self.options.checkpoint("after-render", job.node)
                        label = f"{event}{next(letters, '')}" if parallel else f"{event}"
                        since = since if batch else time.monotonic()
                        batch.append((job, outcome, label))
                    if batch and (not waiting or time.monotonic() >= since + GROUP_WINDOW):
                        self._commit_renders(run, batch, summary, pending, wakes)
                        batch = []
                self._tracker.wave_done()
            except BaseException:
                # Ctrl-C, SIGTERM or an error stops the runner: no render may outlive it
                with stopped_renders():
                    pool.shutdown(wait=True, cancel_futures=True)
                raise
        if parallel:
            run.log(f"{event}→ ∥done")

    def _render(self, job: Job, run: RunDir, label: str) -> RenderOutcome:
        problem = self._memory_problems.get(job.node)
        if problem is not None:
            return RenderOutcome(ok=False, error="memory-unavailable", detail=problem)
        request = job.request
        if request is None:  # pragma: no cover - dispatched jobs never render here
            raise RuntimeError(f"the render of {job.node!r} was not prepared in this run")
        runtime = self.intent.nodes[job.node].runtime or {}
        try:
            outcome = render_delegating(
                self.renderers[job.node],
                request,
                allowed=tuple(runtime.get("delegates", ())),
                delegates=self.delegates,
                contracts=self._contracts(run, runtime.get("delegates", ())),
                log=run.log,
                label=label,
                jobs=self.options.jobs,
            )
        except Exception as exc:  # a render plug-in bug must not take the runner down
            if disk_full(exc):  # but a full disk is no outcome of the render: exit 2, resume
                raise
            outcome = RenderOutcome(
                ok=False, error="exception", detail=f"{type(exc).__name__}: {exc}"
            )
        if request.memory is not None:  # the session is over: close its segment
            state = "ok" if outcome.ok else f"failed ({outcome.error})"
            rotate(request.memory, run_id=request.run_id, node=job.node, outcome=state)
        if not outcome.ok:
            return outcome
        problem = cost_problem(outcome.cost) if outcome.ok else None
        if problem is not None:
            return RenderOutcome(ok=False, error="invalid-cost", detail=problem)
        return outcome

    def _memory(self, run: RunDir, node: str) -> AgentMemory | None:
        """The node's agent memory for this session; a folder that cannot be used fails
        the render instead (`memory-unavailable`)."""
        self._memory_problems.pop(node, None)
        try:
            return open_memory(
                self.intent.nodes[node].runtime,
                node,
                root=self.root,
                run_dir=run.path,
                ephemeral=self.backend.ephemeral,
            )
        except MemoryUnavailable as exc:
            self._memory_problems[node] = str(exc)
            return None

    def _contracts(self, run: RunDir, names: Iterable[str]) -> dict[str, Path]:
        """The snapshotted source of each delegate that has one (a function's file)."""
        wanted = set(names)
        found: dict[str, Path] = {}
        for source in self.intent.raw.get("sources", []):
            name = source.get("name")
            if name in wanted and (path := run.source(str(source["path"]))) is not None:
                found[str(name)] = path
        return found

    # -- preparing a render ---------------------------------------------------------------

    def _changed_inputs(self, run: RunDir, job: Job) -> list[str]:
        return changed_inputs(self, run, job)

    def _prepare(
        self, run: RunDir, node: str, wake: Wake
    ) -> tuple[RenderRequest, tuple[tuple[str, str], ...]]:
        return prepare_render(self, run, node, wake)

    # -- commit-and-sign ------------------------------------------------------------------

    def _commit_renders(
        self,
        run: RunDir,
        batch: list[tuple[Job, RenderOutcome, str]],
        summary: RunSummary,
        pending: set[str],
        wakes: dict[str, Wake],
    ) -> None:
        """Judge the finished renders of `batch`, commit them as one group, then wake
        their subscribers."""
        judged = [self._judge(run, job, outcome, label) for job, outcome, label in batch]
        self._commit(run, [item for item, _, _ in judged])
        for (item, status, diff), (job, _, _) in zip(judged, batch, strict=True):
            self._committed(run, job, item.receipt, status, diff, summary, pending, wakes)

    def _judge(
        self, run: RunDir, job: Job, outcome: RenderOutcome, label: str
    ) -> tuple[Commit, ReceiptStatus, SemanticDiff]:
        node = job.node
        spec, head = self.intent.nodes[node], self.heads[node]
        if job.request is None:  # a render that never ran here: only a failure is judged
            if outcome.ok:  # pragma: no cover - a worker's renders are judged by the worker
                raise RuntimeError(f"no artifact of {node!r} to judge in this run")
            status, tokens, files, diff = failed(spec, head, outcome)
        else:
            changed = self._changed_inputs(run, job)
            if changed and outcome.ok:
                noun = "pinned input" if len(changed) == 1 else "pinned inputs"
                detail = f"{noun} {', '.join(changed)} changed while the render ran"
                outcome = RenderOutcome(ok=False, error="input-changed", detail=detail)
            status, tokens, files, diff = evaluate(spec, head, run, outcome, job.request.output)
        receipt = build_receipt(
            node=node,
            prev=self.heads[node].hash,
            contract_fingerprint=job.decision.memo[0],
            wake_source=job.wake.source,
            wake_refs=job.wake.refs,
            input_fingerprints=job.decision.memo[1],
            fingerprints=tokens,
            status=status,
            semantic_diff=diff,
            cost=render_cost(outcome, self.providers.get(node, "none"), job.wake.source),
        )
        mark = _MARKS.get(status)
        marker = f"{label}→ {node} {mark or '✗ ' + str(diff.get('error'))}"
        return Commit(node=node, receipt=receipt, files=files, marker=marker), status, diff

    def _committed(
        self,
        run: RunDir,
        job: Job,
        receipt: Receipt,
        status: ReceiptStatus,
        diff: SemanticDiff,
        summary: RunSummary,
        pending: set[str],
        wakes: dict[str, Wake],
    ) -> None:
        node = job.node
        self._tracker.ended(node, status, receipt["content_hash"], diff)
        if job.request is not None:  # prepared here (a worker records its own agent)
            self._tracker.agent(job.request.memory)
            run.drop_staging(node, job.request.attempt)
        if node in self.options.clocked:
            self.backend.put_value(clock_key(node), {"last_render": utc_now()})
        if status == ReceiptStatus.FAILED:
            summary.failed.append((node, str(diff["error"]), str(diff.get("reason", ""))))
        else:
            (summary.rendered if status == ReceiptStatus.RENDERED else summary.skipped).append(node)
        event = Event(kind=EventKind(status), node=node, detail=str(diff.get("error", "")))
        self.options.on_event(event)
        if status == ReceiptStatus.RENDERED:
            for subscriber in subscribers_woken(self.intent, node, diff["changed"]):
                wake = Wake(source=WakeSource.INPUT, refs=frozenset({receipt["content_hash"]}))
                wakes[subscriber] = wakes[subscriber].merge(wake) if subscriber in wakes else wake
                pending.add(subscriber)

    def _skip_receipt(self, node: str, decision: Decision, wake: Wake, marker: str) -> Commit:
        facets = self.intent.nodes[node].facets
        receipt = skipped(node, self.heads[node], decision.memo, wake, facets)
        return Commit(node=node, receipt=receipt, files=None, marker=marker)

    def _commit(self, run: RunDir, commits: list[Commit]) -> None:
        addresses = commit_group(self.backend, run, commits, self.options.checkpoint)
        for item in commits:
            self._advance(item.node, item.receipt, addresses.get(item.node))

    def _advance(self, node: str, receipt: Receipt, address: str | None) -> None:
        """A durable receipt of `node` is its head now (a failed one keeps the last good)."""
        head = self.heads[node]
        failed = receipt["status"] == ReceiptStatus.FAILED
        self.heads[node] = NodeHead(last=receipt, last_ok=head.last_ok if failed else receipt)
        if address is not None:
            self._versions[node] = address

    # -- for renders committed elsewhere (runtime/workers/) -----------------------------

    def judge(
        self, run: RunDir, job: Job, outcome: RenderOutcome, label: str
    ) -> tuple[Receipt, dict[str, bytes] | None, str]:
        """A finished render's receipt, the files it publishes and its vm.log.md marker."""
        item, _, _ = self._judge(run, job, outcome, label)
        return item.receipt, item.files, item.marker

    def commit(
        self,
        run: RunDir,
        node: str,
        receipt: Receipt,
        files: dict[str, bytes] | None,
        marker: str,
    ) -> str | None:
        """Commit-and-sign one receipt here; the node's version after it."""
        self._commit(run, [Commit(node=node, receipt=receipt, files=files, marker=marker)])
        return self._versions.get(node)

    def settle(
        self, run: RunDir, job: Job, receipt: Receipt, address: str | None, wave: Wave
    ) -> None:
        """A receipt of `job` is durable (a worker committed it): it is the node's head;
        then run state, the summary and the subscribers it wakes, as after a local commit."""
        self._advance(job.node, receipt, address)
        status = ReceiptStatus(receipt["status"])
        diff = receipt["semantic_diff"]
        self._committed(run, job, receipt, status, diff, wave.summary, wave.pending, wave.wakes)
