"""The render queue: a procrastinate App over the PostgreSQL backend's database.

procrastinate's tables, types and functions live in the backend's schema (every
connection sets `search_path` to it), so one database holds several projects' queues
apart; its queue is `prosec.{schema}`, so a worker wakes (LISTEN/NOTIFY) only for its
own schema's jobs. The schema is installed the first time a runner or worker opens it,
under an advisory lock. A worker that dies stops sending heartbeats; after the lease its
`doing` jobs are stalled and `retry_stalled` puts them back to `todo`, where another
worker takes them.

Connection strings are never printed: errors from here are redacted by the caller.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import procrastinate
import psycopg
from procrastinate.exceptions import AlreadyEnqueued
from procrastinate.jobs import Job
from procrastinate.schema import SchemaManager

from .jobs import RenderJob

__all__ = ["TASK", "Queue", "commit_channel", "queue_name"]

TASK = "prosec.render"
_STALLED = """
SELECT job.id FROM procrastinate_jobs job
  LEFT JOIN procrastinate_workers w ON w.id = job.worker_id
 WHERE job.status = 'doing' AND job.queue_name = %s
   AND (job.worker_id IS NULL OR w.last_heartbeat < NOW() - make_interval(secs => %s))
"""


def queue_name(schema: str) -> str:
    return f"prosec.{schema}"


def commit_channel(schema: str) -> str:
    """The channel a worker's commit transaction notifies (the node's name)."""
    return f"prosec_commit_{schema}"


def install(db: psycopg.Connection[Any], schema: str) -> None:
    """procrastinate's schema in `schema`, once: openers wait on a session advisory lock
    and look again once they hold it (a look inside the creating transaction could still
    miss a schema another opener has just committed)."""
    if _installed(db, schema):
        return
    key = f"prosec-queue:{schema}"
    db.execute("SELECT pg_advisory_lock(hashtext(%s))", (key,))
    try:
        if _installed(db, schema):
            return
        with db.transaction():
            db.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}".encode())
            db.execute(f"SET LOCAL search_path TO {schema}".encode())
            db.execute(SchemaManager.get_schema().encode())
    finally:
        db.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))


def _installed(db: psycopg.Connection[Any], schema: str) -> bool:
    found = db.execute("SELECT to_regclass(%s)", (f"{schema}.procrastinate_jobs",)).fetchone()
    return found is not None and found[0] is not None


class Queue:
    """The App for one schema; `worker=True` opens the async connector a worker runs on."""

    def __init__(self, url: str, schema: str, *, worker: bool = False) -> None:
        self.schema = schema
        self.queue = queue_name(schema)
        options = {"options": f"-c search_path={schema}"}
        connector: procrastinate.BaseConnector
        if worker:
            connector = procrastinate.PsycopgConnector(conninfo=url, kwargs=options)
        else:
            connector = procrastinate.SyncPsycopgConnector(
                conninfo=url, kwargs=options, min_size=1, max_size=2
            )
        self.app = procrastinate.App(connector=connector)

    def register(self, render: Callable[..., Any], attempts: int) -> None:
        """The render task (a worker's): sync, run in a thread by procrastinate; an
        error (a lost connection) retries it, up to `attempts` starts in all."""
        self.app.task(name=TASK, queue=self.queue, pass_context=True, retry=attempts)(render)

    def open(self) -> None:
        self.app.open()

    def close(self) -> None:
        self.app.close()

    def defer(self, job: RenderJob) -> bool:
        """Enqueue one render; False when that render is already queued (a no-op)."""
        deferrer = self.app.configure_task(
            TASK, queue=self.queue, lock=job.key, queueing_lock=job.key
        )
        try:
            deferrer.defer(job=job.payload())
        except AlreadyEnqueued:
            return False
        return True

    def defer_all(self, renders: list[RenderJob]) -> int:
        """Enqueue a wave's renders in one round trip (one by one if one of them is
        already queued, so only that one is a no-op); how many were new."""
        batch = [
            Job(
                queue=self.queue,
                lock=job.key,
                queueing_lock=job.key,
                task_name=TASK,
                task_kwargs={"job": job.payload()},
            )
            for job in renders
        ]
        try:
            self.app.job_manager.batch_defer_jobs(batch)
        except AlreadyEnqueued:
            return sum(self.defer(job) for job in renders)
        return len(batch)

    def retry_stalled(self, db: psycopg.Connection[Any], lease: float) -> list[int]:
        """Put back to `todo` the running jobs of workers silent for longer than `lease`."""
        rows = db.execute(_STALLED.encode(), (self.queue, lease)).fetchall()
        retried = []
        for (job_id,) in rows:
            try:
                self.app.job_manager.retry_job_by_id(job_id, retry_at=dt.datetime.now(dt.UTC))
            except procrastinate.exceptions.ConnectorException:
                continue  # finished or retried meanwhile
            retried.append(int(job_id))
        return retried

    def ended_jobs(self, db: psycopg.Connection[Any], keys: list[str]) -> list[str]:
        """The keys among `keys` whose jobs all ended (failed: retries spent; succeeded
        or aborted) with none left to run: if no receipt came of them, none will."""
        rows = db.execute(
            b"SELECT lock FROM procrastinate_jobs WHERE queue_name = %s AND lock = ANY(%s) "
            b"GROUP BY lock HAVING bool_and(status NOT IN ('todo', 'doing'))",
            (self.queue, keys),
        ).fetchall()
        return [str(row[0]) for row in rows]

    def forget_finished(self, db: psycopg.Connection[Any]) -> None:
        """Drop the finished jobs of earlier runs and the jobs a dead runner left queued
        (at a runner's start, under the runner lock: none of them is this run's)."""
        db.execute(
            b"DELETE FROM procrastinate_jobs WHERE queue_name = %s AND status <> 'doing'",
            (self.queue,),
        )
