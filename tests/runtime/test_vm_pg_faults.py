"""PostgreSQL faults during a VM run: the run's own connection is terminated
(`pg_terminate_backend`) at random moments. The run fails cleanly (an error naming
the store, no traceback, no connection string), and `prosec resume` (or, when the cut
came before the run existed, the next `prosec run`) completes it with every row of an
uninterrupted run, none lost and none duplicated, and the same result."""

from __future__ import annotations

import json
import os
import random
import subprocess
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from .backends.sql_stores import database
from .project import PROSEC
from .test_vm_conformance import CASES, Store, logical
from .vm.support import VmProject

TRIALS = 12
PROGRAMS = ["vm-loops", "vm-parallel", "vm-blocks"]


def _terminate(url: str) -> int:
    """End every other connection to the test's database (the run's); how many."""
    with psycopg.connect(url, autocommit=True) as db:
        rows = db.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


def _run(
    store: Store, args: list[str], delay: float | None
) -> tuple[subprocess.CompletedProcess[str], float]:
    """`prosec run` with the store, its connection terminated `delay` s after the run
    folder appeared (None: never); the process and the seconds from that moment on."""
    project = store.project
    process = subprocess.Popen(
        [str(PROSEC), "run", project.entry, "--backend", "postgres", "--json", *args],
        cwd=project.root,
        env={**os.environ, **store.env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    runs = project.root / "runs"
    while process.poll() is None and not (runs.is_dir() and any(runs.glob("2*"))):
        time.sleep(0.005)
    began = time.monotonic()
    if delay is not None:
        time.sleep(delay)
        if process.poll() is None:
            assert store.url is not None
            _terminate(store.url)
    out, err = process.communicate(timeout=180)
    done = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    return done, time.monotonic() - began


def _result(run: Path) -> Any:
    return json.loads((run / "vm" / "result.json").read_text())


@pytest.mark.slow
@pytest.mark.postgres
def test_a_terminated_connection_fails_the_run_cleanly_and_resume_completes_it(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from .test_vm_conformance import reference

    rng = random.Random(4)
    references: dict[str, tuple[dict[str, Any], Any, float]] = {}
    for program in PROGRAMS:
        entry, table, args = CASES[program]
        expected = reference(tmp_path / "ref", program, monkeypatch)
        with database(postgres_url) as url:
            project = VmProject.create(tmp_path / "timed", program, entry, {**table, "sleep": 0.05})
            store = Store("postgres", project, url)
            done, duration = _run(store, args, None)
            assert done.returncode == 0, done.stderr
            references[program] = (expected, json.loads(done.stdout)["result"], duration)
    cut = 0
    for trial in range(TRIALS):
        program = PROGRAMS[trial % len(PROGRAMS)]
        entry, table, args = CASES[program]
        expected, result, duration = references[program]
        with database(postgres_url) as url:
            project = VmProject.create(
                tmp_path / f"t{trial}", program, entry, {**table, "sleep": 0.05}
            )
            store = Store("postgres", project, url)
            first, _ = _run(store, args, rng.uniform(0, duration))
            assert "Traceback" not in first.stderr, (trial, first.stderr)
            assert url not in first.stdout + first.stderr
            runs = (
                sorted((project.root / "runs").glob("2*"))
                if (project.root / "runs").is_dir()
                else []
            )
            if first.returncode != 0:
                cut += 1
                assert first.returncode == 2, (trial, first.returncode, first.stderr)
                assert "Error" in first.stderr or "error" in first.stderr, first.stderr
            if not runs:  # cut before the run existed: the next run starts it afresh
                again, _ = _run(store, args, None)
                assert again.returncode == 0, again.stderr
                runs = sorted((project.root / "runs").glob("2*"))
            (run,) = runs
            if first.returncode != 0:  # the store was lost before the run's end marker
                resumed = project.prosec(
                    "resume", run.name, "--backend", "postgres", "--json", env=store.env
                )
                assert resumed.returncode == 0, (trial, resumed.stdout, resumed.stderr)
            rows = store.rows({"run_id": run.name, "path": str(run)})
            got = logical(rows, run.name)
            got["run"]["metadata"].pop("resumed", None)
            assert got == expected, trial
            assert _result(run) == {"result": result}, trial
    assert cut >= TRIALS // 2, cut
