"""Issue 18: a 200-node DAG whose renders sleep 50 ms, on 1, 2, 4 and 8 workers against
the real PostgreSQL, and on the filesystem backend with --jobs 1, 2, 4 and 8.

The DAG is one source and four layers of 50, 50, 50 and 49 nodes, each node reading two
of the layer before it, so a wave holds up to 50 renders. Renders are I/O-bound (a
`sleep`), so the aim is a near-linear speedup to 8 workers on this 2-core machine. Wall
time is the whole `prosec run`, local workers' start and stop included; the serial
floor is 200 × 50 ms = 10 s. Each configuration runs on a fresh schema (or state/).

Measured on the 2-core machine shared with four other sessions (load average 5-8, both
cores busy throughout), 4 Dec 2026, two interleaved rounds, before → after this
round's changes (the runner no longer prepares dispatched renders; workers forked from
the runner, one project and connection per worker, scratch runs holding only the
sources a render reads; a wake's commits settled together, in one transaction):
1 worker 35.3/28.1 s → 32.5/22.8 s; 2: 19.1/16.1 → 18.7/16.9; 4: 12.9/11.1 → 9.4/7.4;
8: 15.6/15.1 → 9.0/8.3 s (speedup at 8: 2.3/1.9× → 3.6/2.7×); a third round, 1 and 8
workers only: 25.6 and 9.7 s → 23.6 and 4.9 s (2.7× → 4.8×); filesystem --jobs
1/2/4/8: 15.3/11.6/12.4/9.9 s and 17.1/7.2/6.4/9.2 s.
prosec's CPU (runner, workers, renders) per run: 1 worker 5.7 → 4.4 s, 8 workers
10.5 → 5.6 s (each worker added costs ~0.17 s of it, was ~0.7 s). Where a run of 8 workers goes
(4.8 s): ~1 s before the first wave (the runner's start and its run folder, 200
sources snapshotted), then 50 renders per wave in ~0.75 s (7 rounds of ~90 ms: the
50 ms sleep, the render's processes, ~10 ms of the worker's CPU, its commit, the
queue's fetch and finish), ~0.05 s between waves, ~0.4 s to stop; CPU: runner 1.1 s,
workers 0.35 s each, render processes 0.55 s, PostgreSQL ~0.8 s. On two cores that
other work keeps busy the CPU, not the sleeps, bounds the speedup: the aim of a
near-linear speedup to 8 is not met here (not measured on more cores).
"""

from __future__ import annotations

import json
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from ..runtime.project import Project, intent

SLEEP = 0.05
LAYERS = (1, 50, 50, 50, 49)
RENDER = (
    '[render.default]\nkind = "command"\ncommand = ["sh", "-c", '
    f'"sleep {SLEEP}; printf \'{{\\"n\\": \\"%s\\"}}\' \\"$PROSEC_NODE\\" '
    '> \\"$PROSEC_OUTPUT/truth.json\\""]\n'
)


def dag() -> dict[str, object]:
    names = [[f"n{k}-{i}" for i in range(width)] for k, width in enumerate(LAYERS)]
    edges = []
    for k in range(1, len(names)):
        before = names[k - 1]
        for i, node in enumerate(names[k]):
            for producer in {before[i % len(before)], before[(i + 1) % len(before)]}:
                edges.append((node, producer, "@atomic"))
    nodes = {name: {} for layer in names for name in layer}
    assert len(nodes) == 200
    return intent(nodes, edges)


@pytest.fixture
def schema_env(postgres_url: str) -> Iterator[dict[str, str]]:
    made: list[str] = []

    def fresh() -> dict[str, str]:
        name = f"prosec_b_{secrets.token_hex(4)}"
        made.append(name)
        return {"OPENPROSE_POSTGRES_URL": postgres_url, "OPENPROSE_POSTGRES_SCHEMA": name}

    yield fresh  # type: ignore[misc]
    with psycopg.connect(postgres_url, autocommit=True) as db:
        for name in made:
            db.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE".encode())


def timed(project: Project, *args: str, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    result = project.prosec("run", ".", "--json", *args, env=env, timeout=600)
    took = time.perf_counter() - start
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads(result.stdout)
    assert len(summary["rendered"]) == 200 and summary["failed"] == [], summary
    return took


@pytest.mark.postgres
def test_workers_scale_a_200_node_dag(tmp_path: Path, schema_env) -> None:  # type: ignore[no-untyped-def]
    doc = dag()
    figures: dict[str, float] = {}
    for count in (1, 2, 4, 8):
        root = tmp_path / f"w{count}"
        project = Project.create(root, doc, RENDER)
        env = schema_env()
        figures[f"workers {count}"] = timed(
            project, "--backend", "postgres", "--workers", str(count), "--lease", "10", env=env
        )
        verify = project.prosec("receipts", "verify", ".", "--backend", "postgres", env=env)
        assert verify.returncode == 0, verify.stdout + verify.stderr
        shutil.rmtree(root)
    for jobs in (1, 2, 4, 8):
        root = tmp_path / f"fs{jobs}"
        project = Project.create(root, doc, RENDER)
        figures[f"filesystem --jobs {jobs}"] = timed(project, "--jobs", str(jobs))
        shutil.rmtree(root)
    base = figures["workers 1"]
    fs_base = figures["filesystem --jobs 1"]
    print(
        "\n[issue 18] 200-node DAG, renders sleeping 50 ms (serial floor 10 s); aim: "
        "near-linear speedup to 8 workers"
    )
    for name, took in figures.items():
        ref = fs_base if name.startswith("filesystem") else base
        print(f"[issue 18] {name:22s} {took:6.2f} s  speedup {ref / took:4.2f}×")
    # a regression guard, below the aim (on 2 cores shared with other work the CPU each
    # render costs caps the speedup; the filesystem's in-process --jobs meets the same
    # cap): more workers must be clearly faster
    best = min(figures[f"workers {n}"] for n in (2, 4, 8))
    assert best < 0.6 * figures["workers 1"], figures
