"""A worker's side of a render job: render it here, commit it in one transaction.

Each of procrastinate's job threads opens its own view of the project (prose.toml, the
active compiled intent, the render bindings, its own database connection) and a scratch
run folder outside the project (inputs are read out of the database at their pinned
versions, never from the runner's disk). The commit writes the version (a large one as
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
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..backends.base import ChainError
from ..backends.postgres import PostgresBackend
from ..canonical import canonical_json, content_address, encode_frame
from ..executor import Engine, EngineOptions, Job
from ..fsio import atomic_write_text
from ..keys import caller_key
from ..protocol import PendingRecord, Receipt
from ..renders import RenderOutcome
from ..renders.process import LOG_FILE
from ..runs import RunDir
from ..session import Project, open_project
from .jobs import RenderJob, intent_token
from .queue import commit_channel

__all__ = ["WorkerSide"]

log = logging.getLogger("prosec.workers")


@dataclass(slots=True)
class _Local:
    project: Project
    backend: PostgresBackend
    intent: str
    scratch: Path
    runs: dict[str, RunDir]


class WorkerSide:
    """What one `prosec worker` process renders with (one project view per thread)."""

    def __init__(self, root: Path, env: Mapping[str, str], *, attempts: int) -> None:
        self.root = root
        self.env = dict(env)
        self.attempts = attempts
        _remove_dead_scratch()
        self.scratch = Path(tempfile.mkdtemp(prefix=f"prosec-worker-{os.getpid()}-"))
        self._local = threading.local()
        self._count = 0
        self._lock = threading.Lock()

    def open(self) -> _Local:
        """This thread's project view, opened on first use."""
        local: _Local | None = getattr(self._local, "view", None)
        if local is None:
            project = open_project(self.root, backend="postgres", env=self.env)
            project.bind_renders({})
            assert isinstance(project.backend, PostgresBackend)
            with self._lock:
                self._count += 1
                scratch = self.scratch / str(self._count)
            local = _Local(
                project=project,
                backend=project.backend,
                intent=intent_token(dict(project.intent.raw)),
                scratch=scratch,
                runs={},
            )
            self._local.view = local
        return local

    def forget(self) -> None:
        """Drop this thread's view (after a database error: the next job reconnects)."""
        local: _Local | None = getattr(self._local, "view", None)
        if local is not None:
            self._local.view = None
            with contextlib.suppress(Exception):  # the connection may be gone already
                local.backend.close()

    def close(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)

    # -- one job --------------------------------------------------------------------------

    def render(self, payload: dict[str, Any], attempts: int) -> str:
        """Render and commit one job; what happened, in a word (procrastinate logs it)."""
        job = RenderJob.from_payload(payload)
        try:
            return self._render(job, attempts)
        except Exception:
            self.forget()
            raise

    def _render(self, job: RenderJob, attempts: int) -> str:
        local = self.open()
        intent = local.project.intent
        node = job.node
        if node not in intent.nodes:  # fails the job: the runner commits the failure
            raise RuntimeError(f"{node!r} is not a node of this worker's compiled intent")
        if job.intent != local.intent:
            reason = (
                "this worker's active compiled intent is not the one the runner decided "
                "with: build and activate the same sources on every worker's machine"
            )
            log.warning("%s: %s", node, reason)
            return self._commit_failure(local, job, "intent-mismatch", reason)
        producers = sorted({edge.producer for edge in intent.inputs_of[node]})
        heads = local.backend.heads([node, *producers])
        if heads[node].hash != job.prev:
            log.info("%s: already committed (its head moved on): nothing to do", node)
            return "already-committed"
        if attempts >= self.attempts:
            reason = (
                f"the render was started {attempts} times and no worker finished it "
                "(each died or lost its database connection first)"
            )
            log.warning("%s: %s", node, reason)
            return self._commit_failure(local, job, "worker-lost", reason)
        engine = self._engine(local, job, heads)
        run = self._run(local, job.run_id)
        self._bind_caller(local, run)
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
        done = self._commit(local, job, receipt, files, marker, _render_log(run, node))
        run.drop_staging(node, request.attempt)
        return done

    def _engine(self, local: _Local, job: RenderJob, heads: dict[str, Any]) -> Engine:
        project = local.project
        options = EngineOptions(jobs=1, timeout=job.timeout, default_model=job.default_model)
        engine = Engine(
            root=project.root,
            intent=project.intent,
            backend=local.backend,
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

    def _run(self, local: _Local, run_id: str) -> RunDir:
        """This thread's scratch folder of the run (the runner's own is not reachable)."""
        run = local.runs.get(run_id)
        if run is None:
            for old in local.runs.values():  # one run at a time: earlier ones are done
                shutil.rmtree(old.path, ignore_errors=True)
            local.runs.clear()
            project = local.project
            run = RunDir.create(
                project.root,
                run_id,
                runs_dir=local.scratch,
                intent_bytes=canonical_json(dict(project.intent.raw)) + b"\n",
                sources=project.intent.source_paths(),
                root_source=None,
                title=project.root.name,
                upstream=[],
                info={"kind": "worker"},
            )
            local.runs[run_id] = run
        return run

    def _bind_caller(self, local: _Local, run: RunDir) -> None:
        for name in local.project.intent.caller_inputs():
            stored = local.backend.get_value(caller_key(name))
            if stored is not None:
                path = run.path / "world-model" / "caller" / f"{name}.md"
                atomic_write_text(path, stored["text"])

    # -- commits --------------------------------------------------------------------------

    def _commit(
        self,
        local: _Local,
        job: RenderJob,
        receipt: Receipt,
        files: dict[str, bytes] | None,
        marker: str,
        render_log: str | None = None,
    ) -> str:
        backend = local.backend
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

    def _commit_failure(self, local: _Local, job: RenderJob, error: str, reason: str) -> str:
        heads = local.backend.heads([job.node])
        if heads[job.node].hash != job.prev:
            return "already-committed"
        engine = self._engine(local, job, heads)
        run = self._run(local, job.run_id)
        attempt = "failed"
        request = _FailedRequest(output=run.staging(job.node, attempt), attempt=attempt)
        work = Job(node=job.node, decision=job.decision(), wake=job.wake(), request=request)  # type: ignore[arg-type]
        outcome = RenderOutcome(ok=False, error=error, detail=reason)
        receipt, files, marker = engine.judge(run, work, outcome, job.label)
        return self._commit(local, job, receipt, files, marker)


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


@dataclass(frozen=True, slots=True)
class _FailedRequest:
    """The parts of a RenderRequest judging a render that never ran reads."""

    output: Path
    attempt: str
    memory: None = None
