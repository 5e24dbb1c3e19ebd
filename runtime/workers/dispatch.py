"""The runner's side: a wave's renders as jobs for workers, their commits settled here.

`Dispatcher` is an `EngineOptions.dispatch`: the engine has decided the wave (the
reconciler's rules, untouched) and pinned the versions each render reads, preparing
nothing (the worker prepares its render); the dispatcher enqueues one job per render,
then waits on LISTEN for the workers' commits (a timeout of a fraction of the lease,
never a busy poll). The commits one wake brings are finished together into the run
folder (run ledger, published copy read back out of the database, vm.log.md marker;
one filesystem sync, then their pending records cleared) and settled by the engine
(heads, summary, the subscribers it wakes; their run-state rows in one transaction).
While it waits it puts stalled jobs (their worker's heartbeat older than the lease) back
in the queue, and a job procrastinate gave up on without a receipt is committed here as
a failed receipt, so a run always ends.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import psycopg

from ..backends.base import BackendError, stored_json
from ..backends.postgres import PostgresBackend, find_url
from ..canonical import decode_frame, sha256_token
from ..executor import Engine, Event, Job, Wave
from ..fsio import atomic_write_bytes, sync_filesystem
from ..protocol import EventKind, PendingRecord, Receipt, ReceiptStatus, is_pending_record
from ..renders import RenderOutcome
from ..renders.process import LOG_FILE
from ..runs import RunDir
from .jobs import RenderJob, intent_token
from .local import LocalWorkers
from .queue import Queue, commit_channel, install
from .worker import log_key

__all__ = ["Dispatcher"]

log = logging.getLogger("prosec.workers")


class Dispatcher:
    """Sends waves to workers through the queue of the backend's schema."""

    def __init__(
        self,
        backend: PostgresBackend,
        root: Path,
        env: dict[str, str],
        *,
        lease: float,
        local: LocalWorkers | None = None,
    ) -> None:
        self.backend = backend
        self.root = root
        self.env = env
        self.lease = lease
        self.schema = backend.schema
        self.local = local
        self._intent: str | None = None
        self._listen: psycopg.Connection[Any] | None = None
        self._queue: Queue | None = None

    def _open(self) -> tuple[psycopg.Connection[Any], Queue]:
        """Connect, install the queue, LISTEN and start the local workers (at the first
        wave: a run with nothing to render touches none of it)."""
        if self._listen is not None and self._queue is not None:
            return self._listen, self._queue
        found = find_url(self.root, self.env)
        if found is None:  # pragma: no cover - the backend opened with the same lookup
            raise RuntimeError("no database URL")
        listen = self.backend.connect(options=f"-c search_path={self.schema}")
        try:
            install(listen, self.schema)
            listen.execute(f"LISTEN {commit_channel(self.schema)}".encode())
            queue = Queue(found[1], self.schema)
            queue.open()
            queue.forget_finished(listen)
        except psycopg.Error as exc:
            listen.close()
            self.backend.fail(exc)
        self._listen, self._queue = listen, queue
        if self.local is not None:
            self.local.start()
        return listen, queue

    def close(self) -> None:
        if self.local is not None:
            self.local.stop()
        try:
            if self._queue is not None:
                self._queue.close()
            if self._listen is not None:
                self._listen.close()
        except psycopg.Error as exc:
            self.backend.fail(exc)
        self._listen = self._queue = None

    def __call__(
        self, engine: Engine, run: RunDir, jobs: list[Job], event: int, wave: Wave
    ) -> None:
        if self._intent is None:
            self._intent = intent_token(dict(engine.intent.raw))
        _, queue = self._open()
        parallel = len(jobs) > 1
        if parallel:
            run.log(f"{event}→ ∥start {','.join(job.node for job in jobs)}")
        engine._tracker.wave([job.node for job in jobs], event)
        letters = iter("abcdefghijklmnopqrstuvwxyz")
        waiting: dict[str, tuple[Job, RenderJob]] = {}
        try:
            for job in jobs:
                label = f"{event}{next(letters, '')}" if parallel else f"{event}"
                render = RenderJob(
                    run_id=run.run_id,
                    node=job.node,
                    prev=engine.heads[job.node].hash,
                    contract=job.decision.memo[0],
                    inputs=job.decision.memo[1],
                    wake_source=str(job.wake.source),
                    wake_refs=tuple(sorted(job.wake.refs)),
                    pinned=job.pinned,
                    label=label,
                    intent=self._intent,
                    timeout=engine.options.timeout,
                    default_model=engine.options.default_model,
                )
                engine.options.on_event(Event(kind=EventKind.START, node=job.node))
                waiting[job.node] = (job, render)
            renders = [render for _, render in waiting.values()]
            new = queue.defer_all(renders)
            if new < len(renders):
                log.info("%d of the wave's renders were queued already", len(renders) - new)
            self._wait(engine, run, waiting, wave)
            engine._tracker.wave_done()
        except psycopg.Error as exc:
            self.backend.fail(exc)
        if parallel:
            run.log(f"{event}→ ∥done")

    def _wait(
        self, engine: Engine, run: RunDir, waiting: dict[str, tuple[Job, RenderJob]], wave: Wave
    ) -> None:
        check = set(waiting)  # the first look covers commits made before LISTEN heard them
        while waiting:
            self._settle(engine, run, waiting, check & set(waiting), wave)
            if not waiting:
                return
            check = self._notified(timeout=max(0.2, self.lease / 4))
            if check:
                continue
            # quiet for a while: look after lost workers, spent jobs, commits not heard
            check = set(waiting)
            listen, queue = self._open()
            if self.local is not None:
                for index in self.local.revive():
                    log.warning("local worker %d had died: started it again", index + 1)
            queue.retry_stalled(listen, self.lease)
            for node in sorted(waiting):
                receipt = self._committed(node, waiting[node][1])
                if receipt is not None and node not in self._pending([node]):
                    job, _ = waiting.pop(node)  # committed, its pending record gone
                    self._finish(engine, run, job, receipt, None, wave)
            keys = {render.key: node for node, (_, render) in waiting.items()}
            for key in queue.ended_jobs(listen, list(keys)):
                node = keys[key]
                if self._committed(node, waiting[node][1]) is None:
                    job, render = waiting.pop(node)
                    self._fail(engine, run, job, render, wave)

    def _notified(self, timeout: float) -> set[str]:
        """Nodes whose commits were notified within `timeout` seconds (waiting on the
        connection, not polling), and any that arrived with them."""
        listen, _ = self._open()
        nodes = {n.payload for n in listen.notifies(timeout=timeout, stop_after=1)}
        if nodes:
            nodes.update(n.payload for n in listen.notifies(timeout=0.005))
        return nodes

    def _pending(self, nodes: list[str]) -> dict[str, PendingRecord]:
        listen, _ = self._open()
        rows = listen.execute(
            b"SELECT node, record FROM x_pending WHERE node = ANY(%s)", (nodes,)
        ).fetchall()
        found: dict[str, PendingRecord] = {}
        for node, record in rows:
            value = stored_json(bytes(record), f"x_pending {node}")
            if not is_pending_record(value):
                raise BackendError(f"the pending commit of {node!r} is malformed")
            found[str(node)] = value
        return found

    def _settle(
        self,
        engine: Engine,
        run: RunDir,
        waiting: dict[str, tuple[Job, RenderJob]],
        nodes: set[str],
        wave: Wave,
    ) -> None:
        """Finish the commits among `nodes` (their pending records, read at once)."""
        if not nodes:
            return
        records = {
            node: record
            for node, record in self._pending(sorted(nodes)).items()
            if record["receipt"]["prev"] == waiting[node][1].prev
        }
        if not records:
            return
        listen, _ = self._open()
        addresses = [str(r["version"]) for r in records.values() if r["version"]]
        frames = {
            str(version): bytes(artifact)
            for version, artifact in listen.execute(
                b"SELECT version, artifact FROM world_model_version "
                b"WHERE version = ANY(%s) AND artifact IS NOT NULL",
                (addresses,),
            ).fetchall()
        }
        logs = {
            str(key): value
            for key, value in listen.execute(
                b"SELECT key, value FROM x_kv WHERE key = ANY(%s)",
                ([log_key(run.run_id, node) for node in records],),
            ).fetchall()
        }
        with engine._tracker.batch():  # the batch's run-state rows: one commit
            for node, record in sorted(records.items()):
                job, _ = waiting.pop(node)
                shipped = logs.get(log_key(run.run_id, node))
                if isinstance(shipped, dict) and isinstance(shipped.get("text"), str):
                    text = shipped["text"].encode()
                    atomic_write_bytes(run.workspace(node) / LOG_FILE, text, durable=False)
                version = record["version"]
                files = None
                if version:
                    frame = frames.get(version)
                    if frame is None or sha256_token(frame) != version:
                        frame = self.backend.get_version(node, version)  # an attachment
                    files = (version, decode_frame(frame))
                marked = (record["marker"], files)
                self._finish(engine, run, job, record["receipt"], marked, wave, durable=False)
        # the batch's run-folder writes made durable at once (as a group commit does),
        # before the pending records that would roll them forward are dropped
        sync_filesystem(run.path)
        with listen.transaction():
            listen.execute(b"DELETE FROM x_kv WHERE key = ANY(%s)", (list(logs),))
            listen.execute(b"DELETE FROM x_pending WHERE node = ANY(%s)", (sorted(records),))

    def _committed(self, node: str, render: RenderJob) -> Receipt | None:
        """The receipt committed for `render`, once it is in the node's ledger."""
        chain = self.backend.ledger(node)
        if not chain or chain[-1]["content_hash"] == render.prev:
            return None
        for receipt in reversed(chain):
            if receipt["prev"] == render.prev:
                return receipt
        return None  # pragma: no cover - the head moved from a receipt we never saw

    def _finish(
        self,
        engine: Engine,
        run: RunDir,
        job: Job,
        receipt: Receipt,
        record: tuple[str, tuple[str, dict[str, bytes]] | None] | None,
        wave: Wave,
        *,
        durable: bool = True,
    ) -> None:
        """The run-folder half of a worker's commit (what recover() would roll forward),
        then the engine's settling. `record` is the pending record's marker and files;
        None for a commit whose record another process already finished."""
        node = job.node
        address = None
        run.append_receipt(node, receipt, durable=durable)
        if record is not None:
            marker, published = record
            if published is not None:
                address, files = published
                run.materialize(node, address, files)
            run.log(marker, durable=durable)
        elif receipt["status"] == ReceiptStatus.RENDERED:
            address = self.backend.published_version(node)
            if address is not None:
                files = decode_frame(self.backend.get_version(node, address))
                run.materialize(node, address, files)
        engine.settle(run, job, receipt, address, wave)

    def _fail(self, engine: Engine, run: RunDir, job: Job, render: RenderJob, wave: Wave) -> None:
        reason = "the render job ended without committing a receipt (see the workers' logs)"
        outcome = RenderOutcome(ok=False, error="worker-error", detail=reason)
        receipt, files, marker = engine.judge(run, job, outcome, render.label)
        address = engine.commit(run, job.node, receipt, files, marker)
        engine.settle(run, job, receipt, address, wave)
