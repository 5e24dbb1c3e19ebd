"""ProseScript benchmarks (`make bench`): fence parse times, cold grammar load, the lint paths.

Figures are printed (run with `-s`); each test asserts the aim it measures. Timings are
medians (or minima for whole processes' CPU), so one slow run on a shared machine does
not decide the outcome.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from prosec.compiler.config import Config
from prosec.compiler.ir import Fence
from prosec.compiler.lint import lint_texts
from prosec.compiler.parse import parse_source
from prosec.compiler.prosescript.parse import parse_script, parser

from ..conftest import CORPUS, REPO, prosec_bin
from .timing import byte_compile, median_seconds, process_times, report

RICH = CORPUS / "prosescript" / "src" / "reading-digest.prose.md"


@pytest.fixture(scope="module")
def fences(upstream: Path) -> list[tuple[str, Fence]]:
    found = []
    for file in sorted(upstream.rglob("*.prose.md")):
        path = file.relative_to(upstream).as_posix()
        source, _ = parse_source(path, file.read_text(encoding="utf-8"))
        found += [(path, f) for f in source.fences if f.info in ("prose", "prosescript")]
    return found


@pytest.mark.conformance
def test_parse_every_upstream_fence(fences: list[tuple[str, Fence]]) -> None:
    parser()  # warm: the table loads once per process
    total_bytes = 0
    total = 0.0
    slowest = (0.0, "")
    for path, fence in fences:
        seconds = median_seconds(lambda f=fence, p=path: parse_script(f, p), 15)  # type: ignore[misc]
        size = len(fence.content.encode())
        report(f"parse {path}:{fence.content_line}", f"{seconds * 1000:.2f} ms, {size} B")
        total += seconds
        total_bytes += size
        slowest = max(slowest, (seconds, path))
    rate = total_bytes / 1024 / total
    report(
        f"all {len(fences)} fences",
        f"{total * 1000:.1f} ms, {total_bytes / 1024:.1f} KB, {rate:.0f} KB/s",
    )
    report("slowest", f"{slowest[1]} {slowest[0] * 1000:.2f} ms")
    assert rate > 100  # a keystroke's re-parse of a typical fence stays in the low milliseconds


def _child_cpu(code: str, runs: int) -> list[float]:
    """Per-run figures printed by `code` (milliseconds), each in a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    results = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        results.append(float(out.stdout.strip().splitlines()[-1]))
    return results


_COLD = """
import time
import prosec.compiler.lint
start = time.process_time()
from prosec.compiler.prosescript import parse as ps
{action}
print((time.process_time() - start) * 1000)
"""


def test_grammar_load_cold() -> None:
    table = _child_cpu(_COLD.format(action="assert ps.read_table() is not None"), 7)
    build = _child_cpu(_COLD.format(action="ps.build_parser()"), 3)
    imports = _child_cpu(_COLD.format(action="pass"), 7)
    report("import lark and the ProseScript modules (cpu)", f"{statistics.median(imports):.0f} ms")
    report("... and load the shipped parse table (cpu)", f"{statistics.median(table):.0f} ms")
    report(
        "... or build the LALR tables from the grammar (cpu)", f"{statistics.median(build):.0f} ms"
    )
    assert (
        statistics.median(table) - statistics.median(imports)
        < (statistics.median(build) - statistics.median(imports)) / 3
    )


def test_lint_5kb_prose_file_in_process() -> None:
    text = RICH.read_text(encoding="utf-8")
    sources = [(RICH.name, text)]
    lint_texts(sources, Config())  # warm: the editor path runs in a long-lived process
    median = median_seconds(lambda: lint_texts(sources, Config()), 60)
    report(
        f"lint one {len(text.encode()) / 1024:.1f} KB file with a prose fence",
        f"{median * 1000:.2f} ms",
    )
    assert median < 0.020


def test_lint_process_with_and_without_prose(tmp_path: Path) -> None:
    byte_compile(REPO / "compiler", REPO / "runtime")
    plain = CORPUS / "prosescript" / "src" / "reading-inbox.prose.md"
    # the same file with its fence relabelled: what the file costs without ProseScript
    # (its YAML pattern instance and inline functions included)
    relabelled = tmp_path / RICH.name
    relabelled.write_text(
        RICH.read_text(encoding="utf-8").replace("```prose\n", "```text\n"), encoding="utf-8"
    )
    without = process_times([prosec_bin(), "lint", str(plain)], 12)
    as_text = process_times([prosec_bin(), "lint", str(relabelled)], 12)
    with_prose = process_times([prosec_bin(), "lint", str(RICH)], 12)
    for name, times in (
        ("without a prose fence", without),
        ("with its prose fence relabelled as text", as_text),
        ("with a prose fence", with_prose),
    ):
        report(
            f"prosec lint FILE {name}",
            f"{times.median_wall * 1000:.0f} ms wall, {times.best_cpu * 1000:.0f} ms cpu",
        )
    share = with_prose.best_cpu - as_text.best_cpu
    report(
        "ProseScript's share (cpu: the fence parsed and checked vs as text)",
        f"{share * 1000:.0f} ms",
    )
    report("load average", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    assert with_prose.best_cpu < 0.300
    assert share < 0.100  # lark, the table, the lexer's first compiles, the IR and the checks
