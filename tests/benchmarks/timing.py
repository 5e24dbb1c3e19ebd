"""Timing helpers shared by the benchmarks: medians of repeated runs and one report line."""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


def median_seconds(action: Callable[[], object], runs: int) -> float:
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


def report(name: str, value: str) -> None:
    print(f"\n[bench] {name}: {value}", end="")


@dataclass(frozen=True)
class ProcessTimes:
    """Wall and CPU (user + sys) seconds of repeated runs of one whole process."""

    median_wall: float
    best_wall: float
    median_cpu: float
    best_cpu: float


def process_times(
    args: list[str],
    runs: int,
    before_each: Callable[[], object] | None = None,
    env: dict[str, str] | None = None,
) -> ProcessTimes:
    """Run `args` `runs` times with bytecode caching on and time each run (`before_each`
    runs untimed before every run; `env` is added to the environment)."""
    env = {k: v for k, v in {**os.environ, **(env or {})}.items() if k != "PYTHONDONTWRITEBYTECODE"}
    walls, cpus = [], []
    for _ in range(runs):
        if before_each is not None:
            before_each()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(args, capture_output=True, env=env, check=False)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return ProcessTimes(
        median_wall=statistics.median(walls),
        best_wall=min(walls),
        median_cpu=statistics.median(cpus),
        best_cpu=min(cpus),
    )


def byte_compile(*trees: Path) -> None:
    """Byte-compile prosec and the venv's packages, as a normal `pip install` leaves them.

    pip skips this when PYTHONDONTWRITEBYTECODE is set (as on this machine), and an
    editable checkout compiles on first use; timing a process without it measures the
    compiler, not prosec."""
    purelib = Path(sysconfig.get_paths()["purelib"])
    for tree in (*trees, purelib):
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(tree)], check=False, capture_output=True
        )
