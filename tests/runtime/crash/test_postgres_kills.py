"""Connection termination at random points on PostgreSQL (issue 9): the server ends the
runner's connection (`pg_terminate_backend`) at a random moment of a trigger; the runner
exits 2 with a redacted message or finishes, and recovery (`prosec resume`, re-issuing a
command that never created its run) reaches the rows of an uninterrupted trigger."""

from __future__ import annotations

import random
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .sweep import interrupted, prosec, runtime_project

pytestmark = pytest.mark.postgres

TRIGGER = ("trigger", "g", "--data", '{"n": 7}')
ROWS = {  # what must match: everything but row ids, run ids and clock columns
    "receipt": "node, content_hash, prev, status, line",
    "world_model_version": "version, node, artifact",
    "world_model_published": "node, version",
    "x_kv": "key, value::text",
    "x_pending": "node, record",
    "x_inbox": "wake",
}


@pytest.fixture
def schemas(postgres_url: str) -> Iterator[list[str]]:
    made: list[str] = []
    yield made
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as db:
        for schema in made:
            db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def _project(root: Path, url: str, schemas: list[str]) -> dict[str, str]:
    from psycopg.conninfo import make_conninfo

    schema = f"prosec_kill_{secrets.token_hex(4)}"
    schemas.append(schema)
    runtime_project(root, "postgres")
    env = {
        "OPENPROSE_POSTGRES_URL": make_conninfo(url, application_name=schema),
        "OPENPROSE_POSTGRES_SCHEMA": schema,
    }
    first = prosec(root, "run", ".", "--input", "topic=weather", env=env)
    assert first.returncode == 0, first.stderr
    return env


def _rows(url: str, schema: str) -> dict[str, list[tuple[object, ...]]]:
    import psycopg

    with psycopg.connect(url) as db:
        return {
            table: sorted(
                (tuple(bytes(v) if isinstance(v, memoryview) else v for v in row))
                for row in db.execute(f"SELECT {columns} FROM {schema}.{table}").fetchall()
            )
            for table, columns in ROWS.items()
        }


def _run_state(url: str, schema: str) -> dict[str, object]:
    """The seed 004 run state recovery must leave: every run ended `completed`, nothing
    left executing, and per run each node's completed execution exactly once (a render
    cut and redone is a failed row and a completed one, never two completed)."""
    import psycopg

    with psycopg.connect(url) as db:
        statuses = {r[0] for r in db.execute(f"SELECT status FROM {schema}.run").fetchall()}
        open_rows = db.execute(
            f"SELECT count(*) FROM {schema}.execution WHERE status IN ('executing', 'pending')"
        ).fetchone()
        done = db.execute(
            f"SELECT run_id, statement_text, count(*) FROM {schema}.execution "
            "WHERE status IN ('completed', 'skipped') AND statement_text <> 'parallel:' "
            "GROUP BY run_id, statement_text"
        ).fetchall()
    return {
        "statuses": statuses,
        "open": open_rows,
        "twice": sorted(r[:2] for r in done if r[2] != 1),
        "completed": sorted(str(r[1]) for r in done),
    }


def _terminate_after(url: str, name: str, delay: float) -> threading.Thread:
    import psycopg

    def kill() -> None:
        with psycopg.connect(url, autocommit=True) as db:
            seen = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:  # from the runner's first connection on
                (count,) = db.execute(seen, (name,)).fetchone() or (0,)
                if count:
                    break
                time.sleep(0.005)
            time.sleep(delay)
            db.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = %s AND pid <> pg_backend_pid()",
                (name,),
            )

    thread = threading.Thread(target=kill)
    thread.start()
    return thread


def test_connections_terminated_at_random_points_recover(
    postgres_url: str, tmp_path: Path, schemas: list[str]
) -> None:
    ref_env = _project(tmp_path / "reference", postgres_url, schemas)
    started = time.monotonic()
    assert prosec(tmp_path / "reference", *TRIGGER, env=ref_env).returncode == 0
    duration = (time.monotonic() - started) / 2  # about the time it holds a connection
    expected = _rows(postgres_url, ref_env["OPENPROSE_POSTGRES_SCHEMA"])
    reference = _run_state(postgres_url, ref_env["OPENPROSE_POSTGRES_SCHEMA"])
    assert reference["statuses"] == {"completed"} and reference["twice"] == []
    chance = random.Random(9)
    cut = 0
    for trial in range(8):
        root = tmp_path / f"t{trial}"
        env = _project(root, postgres_url, schemas)
        before = {p.name for p in (root / "runs").iterdir()}
        killer = _terminate_after(
            postgres_url, env["OPENPROSE_POSTGRES_SCHEMA"], chance.uniform(0.0, duration)
        )
        result = prosec(root, *TRIGGER, env=env)
        killer.join()
        assert result.returncode in (0, 2), result.stderr
        assert "password" not in result.stderr.lower()
        cut += result.returncode == 2
        for run_id in interrupted(root):
            resumed = prosec(root, "resume", run_id, env=env)
            assert resumed.returncode == 0, resumed.stderr
        created = {p.name for p in (root / "runs").iterdir() if not p.name.startswith(".")}
        if not created - before:
            again = prosec(root, *TRIGGER, env=env)
            assert again.returncode == 0, again.stderr
        verify = prosec(root, "receipts", "verify", ".", env=env)
        assert verify.returncode == 0, verify.stdout + verify.stderr
        assert _rows(postgres_url, env["OPENPROSE_POSTGRES_SCHEMA"]) == expected, trial
        assert _run_state(postgres_url, env["OPENPROSE_POSTGRES_SCHEMA"]) == reference, trial
    assert cut >= 2, f"only {cut} of 8 trials had their connection cut"


def test_data_jsonb_cannot_store_is_refused_before_queued(
    postgres_url: str, tmp_path: Path, schemas: list[str]
) -> None:
    """Issue 9: a NUL or a lone surrogate in trigger data made PostgreSQL drop a whole
    drained batch, valid wakes included; such data is refused at `trigger` now."""
    from prosec.runtime.backends import open_backend

    root = tmp_path / "p"
    env = _project(root, postgres_url, schemas)
    holder = open_backend("postgres", root, env)
    assert holder.try_lock()  # another runner: triggers are queued
    try:
        for bad, says in (('{"x": "a\\u0000b"}', "NUL"), ('{"x": "\\ud800"}', "lone surrogate")):
            refused = prosec(root, "trigger", "g", "--data", bad, env=env)
            assert refused.returncode == 2, refused.stderr
            assert says in refused.stderr and "queued" not in refused.stdout
        queued = prosec(root, "trigger", "g", "--data", '{"n": 1}', env=env)
        assert queued.returncode == 0 and queued.stdout.startswith("queued"), queued.stderr
    finally:
        holder.unlock()
        holder.close()
    served = prosec(root, "trigger", "h", "--data", '{"m": 2}', env=env)
    assert served.returncode == 0, served.stderr
    rows = _rows(postgres_url, env["OPENPROSE_POSTGRES_SCHEMA"])
    assert ("external.g", '{"data": {"n": 1}}') in rows["x_kv"]
    assert rows["x_inbox"] == []
