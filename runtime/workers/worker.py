"""A worker's side of a render job: render it here, commit it in one transaction.

The worker opens the project once (prose.toml, the active compiled intent, the render
bindings); each job running takes a view: its own database connection and a scratch run
folder outside the project, kept for the run's next jobs. The job prepares its render
there, reading its inputs out of the database at their pinned versions, never from the
runner's disk. The commit writes the version (a large one as
an attachment in the database), the receipt (its append checks `prev == head` under the
node's lock), the published pointer and the pending record the runner finishes from, and
notifies the runner, all in one transaction: a worker that loses the race to another
commits nothing, and says so in its log.

A job whose workers keep dying (its attempts reach the limit) is committed as a failed
receipt, `worker-lost`, with the reason, instead of being tried forever.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..backends.base import ChainError
from ..backends.postgres import PostgresBackend
from ..canonical import canonical_json, content_address, encode_frame
from ..executor import Engine, EngineOptions, Job
from ..fsio import PathEscapeError, atomic_write_bytes, confined
from ..keys import caller_key
from ..protocol import PendingRecord, Receipt
from ..renders import RenderOutcome
from ..renders.process import LOG_FILE
from ..runs import RunDir
from ..session import Project
from ..tracking import Tracker
from .jobs import RenderJob, intent_token
from .queue import commit_channel

__all__ = ["WorkerSide"]

log = logging.getLogger("prosec.workers")


@dataclass(slots=True)
class _View:
    """One job's connection and scratch: a view serves one job at a time and is kept
    for the next (its run folder too, while the jobs are of the same run)."""

    backend: PostgresBackend
    scratch: Path
    run: RunDir | None = None


class WorkerSide:
    """What one `prosec worker` process renders with: the project it opened (settings,
    compiled intent, render bindings; shared by its job threads, as a runner's render
    threads share them) and one database connection and scratch folder per job running."""

    def __init__(self, project: Project, env: Mapping[str, str], *, attempts: int) -> None:
        if not isinstance(project.backend, PostgresBackend):
            raise TypeError("workers render on the PostgreSQL backend")
        self.project = project
        self.env = dict(env)
        self.attempts = attempts
        self.intent = intent_token(dict(project.intent.raw))
        _remove_dead_scratch()
        self.scratch = Path(tempfile.mkdtemp(prefix=f"prosec-worker-{os.getpid()}-"))
        self._lock = threading.Lock()
        self._free = [_View(backend=project.backend, scratch=self.scratch / "1")]
        self._views = 1

    @contextlib.contextmanager
    def _view(self) -> Iterator[_View]:
        """A free view for one job (a new one when all are busy); after an error it is
        dropped with its connection, so the next job reconnects."""
        with self._lock:
            view = self._free.pop() if self._free else None
            if view is None:
                self._views += 1
                scratch = self.scratch / str(self._views)
        if view is None:
            backend = PostgresBackend.from_env(self.project.root, self.env)
            view = _View(backend=backend, scratch=scratch)
        try:
            yield view
        except BaseException:
            with contextlib.suppress(Exception):  # the connection may be gone already
                view.backend.close()
            raise
        with self._lock:
            self._free.append(view)

    def close(self) -> None:
        with self._lock:
            views, self._free = self._free, []
        for view in views:
            with contextlib.suppress(Exception):
                view.backend.close()
        shutil.rmtree(self.scratch, ignore_errors=True)

    # -- one job --------------------------------------------------------------------------

    def render(self, payload: dict[str, Any], attempts: int) -> str:
        """Render and commit one job; what happened, in a word (procrastinate logs it)."""
        job = RenderJob.from_payload(payload)
        with self._view() as view:
            return self._render(view, job, attempts)

    def _render(self, view: _View, job: RenderJob, attempts: int) -> str:
        intent = self.project.intent
        node = job.node
        if node not in intent.nodes:  # fails the job: the runner commits the failure
            raise RuntimeError(f"{node!r} is not a node of this worker's compiled intent")
        if job.intent != self.intent:
            reason = (
                "this worker's active compiled intent is not the one the runner decided "
                "with: build and activate the same sources on every worker's machine"
            )
            log.warning("%s: %s", node, reason)
            return self._commit_failure(view, job, "intent-mismatch", reason)
        producers = sorted({edge.producer for edge in intent.inputs_of[node]})
        heads = view.backend.heads([node, *producers])
        if heads[node].hash != job.prev:
            log.info("%s: already committed (its head moved on): nothing to do", node)
            return "already-committed"
        if attempts >= self.attempts:
            reason = (
                f"the render was started {attempts} times and no worker finished it "
                "(each died or lost its database connection first)"
            )
            log.warning("%s: %s", node, reason)
            return self._commit_failure(view, job, "worker-lost", reason)
        engine = self._engine(view, job, heads)
        run = self._run(view, job.run_id)
        self._place_sources(run, node)
        request, pinned = engine._prepare(run, node, job.wake())
        work = Job(
            node=node, decision=job.decision(), wake=job.wake(), request=request, pinned=pinned
        )
        outcome = engine._render(work, run, job.label)
        if outcome.detail:  # name the runner's run folder, where its log will be
            here = str(run.path)
            detail = outcome.detail.replace(here, f"runs/{job.run_id}")
            outcome = replace(outcome, detail=detail)
        receipt, files, marker = engine.judge(run, work, outcome, job.label)
        done = self._commit(view, job, receipt, files, marker, _render_log(run, node))
        if request.memory is not None and done not in ("discarded", "already-committed"):
            # the agent's memory is on this machine: its rows are recorded from here
            tracker = Tracker(view.backend.run_state, job.run_id, intent.index)
            tracker.agent(request.memory)
        run.drop_staging(node, request.attempt)
        return done

    def _engine(self, view: _View, job: RenderJob, heads: dict[str, Any]) -> Engine:
        project = self.project
        options = EngineOptions(jobs=1, timeout=job.timeout, default_model=job.default_model)
        engine = Engine(
            root=project.root,
            intent=project.intent,
            backend=view.backend,
            renderers=project.renderers,
            providers=project.providers,
            options=options,
            delegates=project.delegates,
            heads=heads,
        )
        pinned = dict(job.pinned)
        for name in heads:  # read exactly the versions the runner pinned
            engine._versions[name] = pinned.get(name)
        return engine

    def _run(self, view: _View, run_id: str) -> RunDir:
        """The view's scratch folder of the run (the runner's own is not reachable),
        with the run's caller inputs in it; made at the run's first job (not synced:
        nothing recovers from it; its sources placed as renders need them), the previous
        run's removed."""
        if view.run is not None and view.run.run_id == run_id:
            return view.run
        if view.run is not None:
            shutil.rmtree(view.run.path, ignore_errors=True)
        project = self.project
        run = RunDir.create(
            project.root,
            run_id,
            runs_dir=view.scratch,
            intent_bytes=canonical_json(dict(project.intent.raw)) + b"\n",
            sources=project.intent.source_paths(),
            root_source=None,
            title=project.root.name,
            upstream=[],
            info={"kind": "worker"},
            lazy=True,
            durable=False,
        )
        for name in project.intent.caller_inputs():  # fixed for the run (its start)
            stored = view.backend.get_value(caller_key(name))
            if stored is not None:
                path = run.path / "world-model" / "caller" / f"{name}.md"
                atomic_write_bytes(path, str(stored["text"]).encode(), durable=False)
        view.run = run
        return run

    def _place_sources(self, run: RunDir, node: str) -> None:
        """Copy into the scratch run the sources a render of `node` reads: its contract
        and its delegates' (copying all of a large project's at every run would cost
        more than most renders)."""
        runtime = self.project.intent.nodes[node].runtime or {}
        wanted = {node, *runtime.get("delegates", ())}
        root = self.project.root
        for source in self.project.intent.raw.get("sources", []):
            if source.get("name") not in wanted or run.source(str(source["path"])):
                continue
            try:
                origin = confined(root, str(source["path"]), "source path")
                target = confined(run.path / "sources", str(source["path"]), "source path")
                data = origin.read_bytes()
            except (PathEscapeError, OSError):
                continue  # as a run snapshot skips a source it cannot read
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(target, data, durable=False)

    # -- commits --------------------------------------------------------------------------

    def _commit(
        self,
        view: _View,
        job: RenderJob,
        receipt: Receipt,
        files: dict[str, bytes] | None,
        marker: str,
        render_log: str | None = None,
    ) -> str:
        backend = view.backend
        node = job.node
        try:
            with backend.atomically(notify=(commit_channel(backend.schema), node)):
                address = None
                if files is not None:
                    address = content_address(files)
                    backend.put_version(node, address, encode_frame(files), run_id=job.run_id)
                backend.append_receipt(job.run_id, receipt)
                if files is not None and address is not None:
                    backend.set_published(node, address, files)
                record: PendingRecord = {
                    "run_id": job.run_id,
                    "receipt": receipt,
                    "version": address,
                    "marker": marker,
                }
                backend.put_pending(node, record)
                if render_log:  # the runner writes it into its run folder
                    backend.put_value(log_key(job.run_id, node), {"text": render_log})
        except ChainError:
            log.warning(
                "%s: another worker committed this render first; this one's work is "
                "discarded (receipt %s not appended)",
                node,
                receipt["content_hash"],
            )
            return "discarded"
        log.info("%s: committed %s (%s)", node, receipt["status"], receipt["content_hash"])
        return str(receipt["status"])

    def _commit_failure(self, view: _View, job: RenderJob, error: str, reason: str) -> str:
        """Commit a failed receipt for a render that is not run (no request: nothing
        was prepared, so the engine judges the failure alone)."""
        heads = view.backend.heads([job.node])
        if heads[job.node].hash != job.prev:
            return "already-committed"
        engine = self._engine(view, job, heads)
        run = self._run(view, job.run_id)
        work = Job(node=job.node, decision=job.decision(), wake=job.wake(), pinned=job.pinned)
        outcome = RenderOutcome(ok=False, error=error, detail=reason)
        receipt, files, marker = engine.judge(run, work, outcome, job.label)
        return self._commit(view, job, receipt, files, marker)


LOG_TAIL = 64 * 1024


def log_key(run_id: str, node: str) -> str:
    """The x_kv key of a render's `__render.log`, on its way to the runner."""
    return f"worker-log:{run_id}:{node}"


def _render_log(run: RunDir, node: str) -> str | None:
    """The tail of the render's output (`__render.log`), as text JSONB can hold."""
    try:
        data = (run.workspace(node) / LOG_FILE).read_bytes()[-LOG_TAIL:]
    except OSError:
        return None
    return data.decode("utf-8", errors="replace").replace("\x00", "") or None


def _remove_dead_scratch() -> None:
    """Remove the scratch folders of workers that died without cleaning up (SIGKILL)."""
    for folder in Path(tempfile.gettempdir()).glob("prosec-worker-*-*"):
        pid = folder.name.split("-")[2]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:
            continue
