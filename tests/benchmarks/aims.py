"""The aims of issue 14, each benchmark's figure against its aim, and the closing table.

A benchmark calls `record(key, figure)` with what it measured; the line is printed at
once (`[aim] … PASS` or `MISS`) and `make bench` ends with a table of every aim, the ones
no benchmark measured in this run marked `not measured`. Recording never asserts: an aim
is a target, the benchmarks' own asserts guard against regressions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Aim:
    """A figure's target: `value <= limit` (or `< limit` when `strict`)."""

    text: str
    limit: float
    unit: str
    strict: bool = False

    def met(self, value: float) -> bool:
        return value < self.limit if self.strict else value <= self.limit

    def show(self, value: float) -> str:
        if self.unit == "×":
            return f"{value:.3f}×"
        if self.unit == "":
            return f"{value:.3f}"
        if self.unit == "ms":
            return f"{value:.1f} ms"
        if self.unit == "s":
            return f"{value:.2f} s"
        return f"{value:.2f} {self.unit}"

    def target(self) -> str:
        sign = "<" if self.strict else "≤"
        return f"{sign} {self.show(self.limit)}"


# Every aim of the issue, in its order; keys are what benchmarks record under.
AIMS: dict[str, Aim] = {
    "1-lint-exponent": Aim("1. lint, 1,000 → 10,000 contracts: fitted exponent", 1.05, ""),
    "1-build-exponent": Aim("1. cold build, 1,000 → 10,000 contracts: fitted exponent", 1.05, ""),
    "1-run-exponent": Aim("1. cold run, 1,000 → 10,000 contracts: fitted exponent", 1.05, ""),
    "2-rebuild-ratio": Aim("2. build after one file changed, largest N: × cold build", 0.1, "×"),
    "2-relint-ratio": Aim("2. re-lint of an unchanged corpus, largest N: × cold lint", 0.1, "×"),
    "3-build-tokenize": Aim("3. cold build of 1,000 contracts: × markdown-it tokenizing", 2.0, "×"),
    "4-fsyncs-per-node": Aim("4. fsyncs per rendered node (cold run, amortised)", 3.0, ""),
    "4-cold-run-floor": Aim(
        "4. cold run of 1,000 no-op nodes: × the floor of writing them durably", 2.0, "×"
    ),
    "4-unchanged-run": Aim("4. unchanged run of 10,000 nodes", 2.0, "s", strict=True),
    "5-fingerprint": Aim("5. 50 MB fingerprint: × json.loads of the same bytes", 1.0, "×"),
    "6-lsp-init": Aim("6. language server initialize", 200.0, "ms", strict=True),
    "6-keystroke-5kb": Aim(
        "6. keystroke → diagnostics, 5 KB file in a 50-file project (median)",
        10.0,
        "ms",
        strict=True,
    ),
    "6-keystroke-82kb": Aim(
        "6. keystroke → diagnostics, 82 KB file (median)", 30.0, "ms", strict=True
    ),
    "7-lint-file": Aim(
        "7. prosec lint FILE, 5 KB with its project's wiring (wall)", 150.0, "ms", strict=True
    ),
    "7-version": Aim("7. prosec --version (wall)", 60.0, "ms", strict=True),
}

RESULTS: dict[str, tuple[float, str]] = {}


def record(key: str, value: float, note: str = "") -> bool:
    """Print one figure against its aim and keep it for the closing table; True if met."""
    aim = AIMS[key]
    RESULTS[key] = (value, note)
    print(f"\n{line(key)}", end="")
    return aim.met(value)


def line(key: str) -> str:
    aim = AIMS[key]
    if key not in RESULTS:
        return f"[aim] {aim.text}: not measured (aim {aim.target()})"
    value, note = RESULTS[key]
    verdict = "PASS" if aim.met(value) else "MISS"
    extra = f"; {note}" if note else ""
    return f"[aim] {aim.text}: {aim.show(value)} (aim {aim.target()}{extra}) {verdict}"


def table() -> list[str]:
    return [line(key) for key in AIMS]


def exponent(sizes: list[int], seconds: list[float]) -> float:
    """The least-squares slope of log(seconds) against log(size): t ∝ N^slope."""
    xs = [math.log(n) for n in sizes]
    ys = [math.log(max(t, 1e-9)) for t in seconds]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / spread
