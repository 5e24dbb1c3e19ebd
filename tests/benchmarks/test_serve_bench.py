"""`prosec serve` benchmarks (`make bench`): trigger acknowledgement latency over real HTTP
on 127.0.0.1, and building the devtools scene of an upstream fixture.

Printed, not asserted (the machine is shared); what was measured is checked. Request
loops are bounded in count and every wait has a timeout.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest
from prosec.runtime.devtools import FixtureState, fixture_scene

from ..runtime.http.harness import running, settings_for, wait_until
from ..runtime.project import Project as Root
from ..runtime.project import intent
from .timing import report

REQUESTS = 200


def _percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p50 = statistics.median(ordered) * 1000
    p95 = ordered[int(0.95 * (len(ordered) - 1))] * 1000
    return f"p50 {p50:.1f} ms, p95 {p95:.1f} ms over {len(ordered)} requests"


def test_trigger_ack_latency(tmp_path: Path) -> None:
    # one gateway rendered by the tests' command render (a process per render)
    project = Root.create(tmp_path / "p", intent({"g": {"wake_source": "external"}}, [], ["g"]))
    with running(settings_for(project.root, cadences=False)) as client:
        idle: list[float] = []
        for n in range(REQUESTS):  # one at a time: the reconciler is idle for each
            start = time.perf_counter()
            ack = client.post("/trigger/g", json={"n": n})
            idle.append(time.perf_counter() - start)
            assert ack.status_code == 202 and ack.json()["run_id"]
            wait_until(lambda: client.get("/status").json()["server"]["in_flight"] is None, 30)
        report("trigger ack, idle reconciler (queued durably + run named)", _percentiles(idle))
        busy: list[float] = []
        for n in range(REQUESTS):  # back to back: most arrive during a run
            start = time.perf_counter()
            ack = client.post("/trigger/g", json={"m": n})
            busy.append(time.perf_counter() - start)
            assert ack.status_code == 202
        report("trigger ack, back to back (queued durably)", _percentiles(busy))
        wait_until(lambda: client.get("/status").json()["server"]["queued"] == 0, 120)
        runs = len(client.get("/runs", params={"limit": 500}).json()["runs"])
        report("runs for the back-to-back burst", f"{runs - REQUESTS} for {REQUESTS} wakes")


@pytest.mark.conformance
def test_fixture_scene_build_time(upstream: Path) -> None:
    state = FixtureState(upstream / "packages/reactor-devtools/fixtures/inbox-triage")
    times = []
    for _ in range(5):
        start = time.perf_counter()
        scene = fixture_scene(state)
        times.append(time.perf_counter() - start)
    assert len(scene.steps) == 95
    report("devtools scene of inbox-triage (95 receipts)", f"{min(times) * 1000:.1f} ms best of 5")
