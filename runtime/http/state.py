"""What one server shares between its requests: settings, the reconciler, the readers.

Backends are opened per thread (a SQLite connection belongs to the thread that opened
it), so requests read through a small pool of reader threads, each with its own
project, reopened when the reconciler reloads a newly activated manifest.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import contextlib
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ..backends import open_backend
from ..devtools.fixture import FixtureState, is_fixture
from ..session import Project, open_project
from .events import Broadcaster
from .settings import ServeSettings
from .worker import Reconciler, manifest_stamp

__all__ = ["ServerState"]

T = TypeVar("T")
READERS = 4


class ServerState:
    """The shared state of one app."""

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        self.events = Broadcaster()
        self.fixture: FixtureState | None = None
        if settings.devtools_only and is_fixture(settings.root):
            self.fixture = FixtureState(settings.root)
        self.worker: Reconciler | None = None
        if not settings.devtools_only:
            self.worker = Reconciler(settings, self.events.post)
        self._pool = cf.ThreadPoolExecutor(READERS, thread_name_prefix="prosec-read")
        self._local = threading.local()
        self._opened: list[Project] = []
        self._opened_lock = threading.Lock()

    def generation(self) -> Any:
        """Changes whenever the project the readers see must be reopened."""
        if self.worker is not None:
            return self.worker.generation
        return manifest_stamp(self.settings.root)

    def _project(self) -> Project:
        generation = self.generation()
        project: Project | None = getattr(self._local, "project", None)
        if project is None or self._local.generation != generation:
            if project is not None and not project.backend.ephemeral:
                with contextlib.suppress(Exception):
                    project.backend.close()
            project = self._open()
            self._local.project, self._local.generation = project, generation
            with self._opened_lock:
                self._opened.append(project)
        return project

    def _open(self) -> Project:
        """A project with its own backend; under `serve` with the reconciler's loaded
        intent (a broken manifest on disk never reaches a reader)."""
        settings = self.settings
        worker = self.worker
        if worker is None:
            return open_project(settings.root, backend=settings.backend, env=settings.env)
        loaded = worker.project
        if loaded.backend.ephemeral:
            return loaded  # in-context state lives in the reconciler's memory only
        name = settings.backend or loaded.config.backend
        return Project(
            root=loaded.root,
            config=loaded.config,
            intent=loaded.intent,
            backend=open_backend(name, loaded.root, settings.env),
        )

    async def read(self, function: Callable[[Project], T]) -> T:
        """Run `function` with this thread's project on a reader thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: function(self._project()))

    async def off_loop(self, function: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, function)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        with self._opened_lock:
            for project in self._opened:
                if not project.backend.ephemeral:
                    with contextlib.suppress(Exception):
                        project.backend.close()
            self._opened.clear()
