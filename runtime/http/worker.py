"""The server's one reconciler: a thread that serves the inbox, fires cadences, reloads.

Wakes reach it through the backend's durable inbox (the HTTP handler queues them before
it acknowledges), so a wake survives a stop. The loop, every `poll` seconds or when
poked: reload the project when `dist/manifest.active.json` changed; queue a
self-driven wake for each cadence that came round (the clock is injectable; after
downtime a cadence is simply due, so it fires once, not once per missed period); serve
whatever the inbox holds. At start it resumes the runs a stop or crash cut.

A stop lets running renders finish for `grace` seconds; then it kills them and the run
stops before its next commit (never inside one), so the run is left for the next start
to resume, with every committed step intact.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import serve
from ..backends import BackendError
from ..executor import EngineOptions, Event, RunSummary
from ..intent import IntentError
from ..keys import clock_key
from ..protocol import EventKind
from ..renders.process import stopped_renders
from ..runs import RunDir
from ..session import MANIFEST, Project, SessionError, open_project
from .settings import ServeSettings

__all__ = ["Reconciler", "WakeBook", "manifest_stamp", "open_bound"]

log = logging.getLogger("prosec.serve")

Notify = Callable[[dict[str, Any]], None]


class _Stopped(BaseException):
    """Raised at a render's end, before its commit, when a stop ran out of grace."""


def manifest_stamp(root: Path) -> tuple[int, int, int] | None:
    """What changes when `prosec activate` replaces the active manifest."""
    try:
        info = (root / MANIFEST).stat()
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def open_bound(settings: ServeSettings) -> Project:
    """The project with its renders bound (SessionError / IntentError / BackendError)."""
    project = open_project(settings.root, backend=settings.backend, env=settings.env)
    project.bind_renders(settings.renders)
    return project


class WakeBook:
    """Which run took each wake the server queued (the last 10,000), and waiters."""

    LIMIT = 10_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wakes: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._waiters: dict[str, cf.Future[str]] = {}

    def add(self, wake_id: str, record: dict[str, Any]) -> cf.Future[str]:
        with self._lock:
            self._wakes[wake_id] = {"state": "queued", "run_id": None, **record}
            while len(self._wakes) > self.LIMIT:
                old, _ = self._wakes.popitem(last=False)
                self._waiters.pop(old, None)
            future: cf.Future[str] = cf.Future()
            self._waiters[wake_id] = future
            return future

    def claim(self, run: RunDir, state: str = "running") -> None:
        """Mark the wakes `run` recorded in its run.json as taken by it."""
        try:
            items = run.info().get("wakes", [])
        except (OSError, ValueError):
            return
        with self._lock:
            for item in items:
                wake_id = item.get("id") if isinstance(item, dict) else None
                record = self._wakes.get(wake_id) if isinstance(wake_id, str) else None
                if record is None or (record["run_id"] and record["run_id"] != run.run_id):
                    continue
                record.update(state=state, run_id=run.run_id)
                future = self._waiters.pop(str(wake_id), None)
                if future is not None and not future.done():
                    future.set_result(run.run_id)

    def forget(self, wake_id: str) -> None:
        with self._lock:
            self._wakes.pop(wake_id, None)
            self._waiters.pop(wake_id, None)

    def get(self, wake_id: str) -> dict[str, Any] | None:
        with self._lock:
            record = self._wakes.get(wake_id)
            return dict(record) if record is not None else None

    def queued(self) -> int:
        with self._lock:
            return sum(1 for r in self._wakes.values() if r["state"] == "queued")


class Reconciler(threading.Thread):
    """The one thread that holds the runner lock for this server."""

    def __init__(self, settings: ServeSettings, notify: Notify) -> None:
        super().__init__(name="prosec-reconciler", daemon=True)
        self.settings = settings
        self.notify = notify
        self.book = WakeBook()
        self.generation = 0
        self.in_flight: str | None = None
        self.last_run: dict[str, Any] | None = None
        self.reload_error: str | None = None
        self.ticks: dict[str, str] = {}  # node → when its cadence last fired (this server)
        self.ready = threading.Event()
        self.failure: str | None = None
        self._poke = threading.Event()
        self._stopping = threading.Event()
        self._abort = threading.Event()
        self._stamp: tuple[int, int, int] | None = None
        self._run: RunDir | None = None
        self._project: Project | None = None
        self._complaints: dict[str, str] = {}
        self._clocked: frozenset[str] = frozenset()

    # -- control (any thread) -------------------------------------------------------------

    def poke(self) -> None:
        self._poke.set()

    def stop(self, grace: float | None = None) -> bool:
        """Stop after the run in flight; kill its renders after `grace` seconds. True when
        the thread ended (it always does: the kill ends every render at once)."""
        self._stopping.set()
        self._poke.set()
        if not self.is_alive():
            return True
        self.join(self.settings.grace if grace is None else grace)
        if self.is_alive():
            log.warning("renders still running after the grace period: stopping them")
            self._abort.set()
            with stopped_renders():
                self.join(30.0)
        return not self.is_alive()

    # -- the loop (this thread) -----------------------------------------------------------

    def run(self) -> None:
        try:
            self._project = open_bound(self.settings)
            self._stamp = manifest_stamp(self.settings.root)
        except (SessionError, IntentError, BackendError, OSError) as exc:
            self.failure = str(exc)
            self.ready.set()
            return
        self.ready.set()
        try:
            self._resume_cut_runs()
            while not self._stopping.is_set():
                self._poke.clear()
                self._step()
                self._poke.wait(self.settings.poll)
        except _Stopped:
            log.info("stopped before a commit; the run resumes at the next start")
        finally:
            with contextlib.suppress(Exception):
                self._project.backend.close()

    def _step(self) -> None:
        self._reload_if_activated()
        if self.settings.cadences:
            self._fire_cadences()
        self._serve_inbox()

    @property
    def project(self) -> Project:
        assert self._project is not None
        return self._project

    def _options(self) -> EngineOptions:
        project = self.project
        self._clocked = serve.clocked_nodes(project)
        return EngineOptions(
            jobs=self.settings.jobs or project.config.jobs,
            timeout=self.settings.timeout or project.config.timeout,
            default_model=project.config.default_model,
            checkpoint=self._checkpoint,
            # the server keeps the cadence clocks itself (_on_event), on its own clock
            clocked=frozenset(),
            on_event=self._on_event,
        )

    def _checkpoint(self, point: str, node: str) -> None:
        if point == "after-render" and self._abort.is_set():
            raise _Stopped

    def _serve_inbox(self) -> None:
        try:
            serve.serve_inbox(
                self.project,
                options=self._options(),
                on_run=self._on_run,
                on_start=self._on_start,
            )
        except (SessionError, BackendError, IntentError, OSError) as exc:
            self._complain("inbox", f"serving the inbox failed: {exc}")
            self.in_flight = None
        else:
            self._complaints.pop("inbox", None)

    def _complain(self, topic: str, message: str) -> None:
        """Log and broadcast a problem once, not at every poll while it lasts."""
        if self._complaints.get(topic) != message:
            self._complaints[topic] = message
            log.error("%s", message)
            self.notify({"type": "error", "message": message})

    def _resume_cut_runs(self) -> None:
        for _ in range(600):  # wait for another runner to finish, bounded
            runs = serve.interrupted_runs(self.project)
            if runs is not None:
                break
            if self._stopping.wait(0.5):
                return
        else:
            return
        for run in runs:
            if self._stopping.is_set():
                return
            log.info("resuming run %s", run.run_id)
            self._on_start(run)
            try:
                summary = serve.resume(self.project, run, self._options())
            except (SessionError, BackendError, OSError) as exc:
                log.error("resuming run %s failed: %s", run.run_id, exc)
                self.in_flight = None
                continue
            self._on_run(run, summary)

    # -- cadences and reloads ---------------------------------------------------------------

    def _fire_cadences(self) -> None:
        project = self.project
        now = self.settings.clock()
        try:
            due = serve.due_wakes(project, now)
        except (SessionError, BackendError, ValueError) as exc:
            self._complain("cadences", f"reading the cadences failed: {exc}")
            return
        self._complaints.pop("cadences", None)
        for wake in due:
            node = wake["node"]
            # queue first, then move the clock: a crash between repeats a tick, never loses one
            serve.enqueue_tick(project, node)
            project.backend.put_value(clock_key(node), {"last_render": now.isoformat()})
            self.ticks[node] = now.isoformat()
            log.info("cadence of %s came round: queued a self-driven wake", node)
            self.notify({"type": "tick", "node": node, "at": now.isoformat()})

    def _reload_if_activated(self) -> None:
        stamp = manifest_stamp(self.settings.root)
        if stamp == self._stamp:
            return
        self._stamp = stamp
        try:
            fresh = open_bound(self.settings)
        except (SessionError, IntentError, BackendError, OSError) as exc:
            self.reload_error = str(exc)
            log.error("the activated manifest was not loaded (still serving the old one): %s", exc)
            self.notify({"type": "error", "message": self.reload_error})
            return
        old, self._project = self._project, fresh
        if old is not None:
            with contextlib.suppress(Exception):
                old.backend.close()
        self.reload_error = None
        self.generation += 1
        log.info("reloaded the activated manifest (%d nodes)", len(fresh.intent.nodes))
        self.notify({"type": "reload", "generation": self.generation})

    # -- engine hooks -------------------------------------------------------------------------

    def _on_start(self, run: RunDir) -> None:
        self._run = run
        self.in_flight = run.run_id
        self.book.claim(run)
        self.notify({"type": "run", "state": "started", "run_id": run.run_id})

    def _on_event(self, event: Event) -> None:
        if event.kind == EventKind.WAVE and self._run is not None:
            self.book.claim(self._run)  # wakes that joined between waves
        elif event.kind in (EventKind.RENDERED, EventKind.SKIPPED, EventKind.FAILED):
            if event.node in self._clocked:
                # as `prosec run --due` counts it: the cadence restarts at every render,
                # read on this server's clock (this thread holds the runner lock)
                now = self.settings.clock().isoformat()
                self.project.backend.put_value(clock_key(event.node), {"last_render": now})
            self.notify({"type": "receipt", "node": event.node, "status": str(event.kind)})

    def _on_run(self, run: RunDir, summary: RunSummary) -> None:
        self.book.claim(run, state="done")
        self.in_flight = None
        self._run = None
        self.last_run = {
            "run_id": run.run_id,
            "rendered": list(summary.rendered),
            "skipped": list(summary.skipped),
            "failed": [{"node": n, "error": e, "reason": r} for n, e, r in summary.failed],
            "ended": time.time(),
        }
        for warning in self.project.warnings:
            log.warning("%s", warning)
        self.project.warnings.clear()
        self.notify({"type": "run", "state": "ended", **self.last_run})
