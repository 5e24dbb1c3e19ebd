"""The crash-point sweep (issue 9): every command killed before each of its mutating file
operations recovers to the uninterrupted state. `make test` runs a sample of the kill
points; the slow tier (`make test-slow`, which `.ci/run` runs) runs every one, for the
filesystem and the SQLite backend, plus torn writes, and writes its counts to
tests/artifacts/crash-sweep/{scenario}.json."""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from .sweep import BUILD, Scenario, Sweep, build_interposer, scenarios

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "crash-sweep"
ALL = [*scenarios("filesystem"), BUILD, *scenarios("sqlite")]
# the sample: the first operations, a spread through the middle, and torn writes
SAMPLE = 5


_OPEN: list[Sweep] = []


def request_close(sweep: Sweep) -> None:
    _OPEN.append(sweep)


@pytest.fixture(autouse=True)
def _close_sweeps() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_interposer(tmp_path_factory.mktemp("interposer"))


def _failures(
    sweep: Sweep, points: list[tuple[int, bool]], workers: int = 1
) -> tuple[list[str], int]:
    """Run the trials (each in its own copy of the project, so `workers` at a time)."""
    with cf.ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = list(pool.map(lambda point: sweep.trial(point[0], tear=point[1]), points))
    failures, killed = [], 0
    for (k, tear), outcome in zip(points, outcomes, strict=True):
        killed += outcome.killed
        failures += [f"K={k}{' (torn)' if tear else ''}: {p}" for p in outcome.problems]
    return failures, killed


@pytest.mark.parametrize("scenario", ALL, ids=lambda s: s.id)
def test_sampled_kill_points_recover(scenario: Scenario, library: Path, tmp_path: Path) -> None:
    sweep = Sweep(scenario, tmp_path, library)
    request_close(sweep)
    total = sweep.count()
    assert total > 10, total
    step = max(1, total // SAMPLE)
    points = [
        (k, False) for k in range(1 + zlib.crc32(scenario.id.encode()) % step, total - 4, step)
    ]
    points.append((total // 2, True))
    failures, killed = _failures(sweep, points)
    assert killed == len(points)
    assert not failures, "\n".join(failures)


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ALL, ids=lambda s: s.id)
def test_every_kill_point_recovers(scenario: Scenario, library: Path, tmp_path: Path) -> None:
    workers = os.cpu_count() or 2
    sweep = Sweep(scenario, tmp_path, library, workers=workers)
    request_close(sweep)
    total = sweep.count()
    points = [(k, False) for k in range(1, total + 1)]
    points += [(k, True) for k in range(3, total + 1, 11)]  # torn writes, where K is a write
    failures, killed = _failures(sweep, points, workers=workers)
    beyond = sweep.trial(total + 1)  # past the last operation the command just finishes
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"{scenario.id}.json").write_text(
        json.dumps(
            {
                "scenario": scenario.id,
                "operations": total,
                "kill_points": len(points),
                "killed": killed,
                "recovered": killed - len({f.split(":")[0] for f in failures}),
                "failed": len({f.split(":")[0] for f in failures}),
                "failures": failures[:50],
            },
            indent=1,
        )
    )
    assert not beyond.killed and not beyond.problems, beyond.problems
    assert not failures, "\n".join(failures[:20])
