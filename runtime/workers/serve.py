"""Run one `prosec worker` process: procrastinate's worker loop on the render queue."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from procrastinate import JobContext

from ..backends.postgres import PostgresBackend, find_url
from ..session import Project
from .queue import Queue, install
from .worker import WorkerSide

__all__ = ["serve_worker"]


def serve_worker(
    project: Project,
    env: Mapping[str, str],
    *,
    name: str,
    concurrency: int,
    lease: float,
    attempts: int,
) -> None:
    """Take render jobs of `project` (opened on the PostgreSQL backend, its renders
    bound) until SIGTERM / Ctrl-C (procrastinate's handlers stop it after the running
    jobs). Heartbeats every quarter lease; LISTEN/NOTIFY wakes it for new jobs (a poll
    every lease catches a lost notification)."""
    backend = project.backend
    found = find_url(project.root, env)
    if found is None or not isinstance(backend, PostgresBackend):  # pragma: no cover
        raise TypeError("a worker serves a project opened on the PostgreSQL backend")
    schema = backend.schema
    with backend.connect(options=f"-c search_path={schema}") as db:
        install(db, schema)
    side = WorkerSide(project, env, attempts=attempts)
    queue = Queue(found[1], schema, worker=True)

    def render(context: JobContext, job: dict[str, object]) -> str:
        return side.render(job, attempts=context.job.attempts)

    queue.register(render, attempts)

    async def main() -> None:
        async with queue.app.open_async():
            await queue.app.run_worker_async(
                queues=[queue.queue],
                name=name,
                concurrency=concurrency,
                update_heartbeat_interval=max(0.1, lease / 4),
                stalled_worker_timeout=lease,
                fetch_job_polling_interval=max(1.0, lease),
                listen_notify=True,
                install_signal_handlers=True,
            )

    try:
        asyncio.run(main())
    finally:
        side.close()
