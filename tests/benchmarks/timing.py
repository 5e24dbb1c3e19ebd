"""Timing helpers shared by the benchmarks: medians of repeated runs and one report line."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_seconds(action: Callable[[], object], runs: int) -> float:
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


def report(name: str, value: str) -> None:
    print(f"\n[bench] {name}: {value}", end="")
