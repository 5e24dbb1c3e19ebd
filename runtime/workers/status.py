"""What `prosec status` shows of the workers: each registered worker with the seconds
since its heartbeat, and the render jobs queued, running and failed (with their nodes).
Plain SQL on procrastinate's tables, so it needs no extra installed; None when the
schema holds no queue (no run has used workers)."""

from __future__ import annotations

from typing import Any

import psycopg

from ..backends.postgres import PostgresBackend
from .queue import queue_name

__all__ = ["queue_status"]


def queue_status(backend: PostgresBackend) -> dict[str, Any] | None:
    schema = backend.schema
    try:
        with backend.connect(options=f"-c search_path={schema}") as db:
            found = db.execute(
                "SELECT to_regclass(%s)", (f"{schema}.procrastinate_jobs",)
            ).fetchone()
            if found is None or found[0] is None:
                return None
            workers = db.execute(
                b"SELECT id, EXTRACT(EPOCH FROM NOW() - last_heartbeat)::float8 "
                b"FROM procrastinate_workers ORDER BY id"
            ).fetchall()
            jobs = db.execute(
                b"SELECT status::text, args->'job'->>'node', worker_id, attempts "
                b"FROM procrastinate_jobs WHERE queue_name = %s "
                b"AND status IN ('todo', 'doing', 'failed') ORDER BY id",
                (queue_name(schema),),
            ).fetchall()
    except psycopg.Error as exc:
        backend.fail(exc)
    names = {"todo": "queued", "doing": "running", "failed": "failed"}
    counts = {"queued": 0, "running": 0, "failed": 0}
    listed: list[dict[str, Any]] = []
    for status, node, worker, attempts in jobs:
        state = names[str(status)]
        counts[state] += 1
        listed.append({"node": node, "state": state, "worker": worker, "attempts": attempts})
    return {
        "workers": [{"id": int(i), "heartbeat_age": round(float(age), 1)} for i, age in workers],
        "jobs": counts,
        "job_list": listed,
    }
