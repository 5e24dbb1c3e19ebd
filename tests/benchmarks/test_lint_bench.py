"""Lint benchmarks (`make bench`): whole corpus, the editor path, and process start-up.

Figures are printed (run with `-s`); each test also asserts the aim it measures. Timings
are medians, so one slow run on a shared machine does not decide the outcome.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from prosec.compiler.config import Config
from prosec.compiler.discover import discover
from prosec.compiler.lint import lint_refs, lint_texts

from ..conftest import REPO, prosec_bin
from .aims import record
from .synth import FILES, wired_project
from .timing import byte_compile, median_seconds, process_times, report

pytestmark = pytest.mark.conformance  # every benchmark here reads the upstream corpus


@pytest.fixture(scope="module")
def corpus_files(upstream: Path) -> list[Path]:
    return sorted(upstream.rglob("*.prose.md"))


def test_whole_corpus_against_markdown_it(upstream: Path, corpus_files: list[Path]) -> None:
    from markdown_it import MarkdownIt

    texts = [p.read_text(encoding="utf-8") for p in corpus_files]

    def tokenize_only() -> None:
        md = MarkdownIt("commonmark", {"html": True}).enable("table")
        for text in texts:
            md.parse(text)

    def lint_cold() -> None:
        # cold: discovery, reading and a fresh markdown-it instance every time
        from prosec.compiler.parse import markdown

        markdown._markdown.cache_clear()
        lint_refs(discover([upstream], upstream), Config())

    baseline = median_seconds(tokenize_only, 5)
    lint = median_seconds(lint_cold, 5)
    report("markdown-it-py tokenize, 255 files", f"{baseline * 1000:.0f} ms")
    report("prosec lint whole upstream corpus", f"{lint * 1000:.0f} ms ({lint / baseline:.2f}x)")
    assert lint <= 3 * baseline


def test_one_5kb_file_in_process(corpus_files: list[Path]) -> None:
    path = min(corpus_files, key=lambda p: abs(p.stat().st_size - 5120))
    text = path.read_text(encoding="utf-8")
    sources = [(path.name, text)]
    lint_texts(sources, Config())  # warm: the editor path runs in a long-lived process
    median = median_seconds(lambda: lint_texts(sources, Config()), 100)
    report(
        f"lint one {len(text.encode()) / 1024:.1f} KB file in-process", f"{median * 1000:.2f} ms"
    )
    assert median < 0.020


@pytest.fixture(scope="module")
def compiled() -> None:
    byte_compile(REPO / "compiler", REPO / "runtime")


def test_process_start_up(compiled: None, corpus_files: list[Path]) -> None:
    path = min(corpus_files, key=lambda p: abs(p.stat().st_size - 5120))
    python = process_times([sys.executable, "-c", "pass"], 20)
    version = process_times([prosec_bin(), "--version"], 20)
    lint = process_times([prosec_bin(), "lint", "--no-cache", str(path)], 20)
    for name, times in (
        ("python -c pass", python),
        ("prosec --version", version),
        ("prosec lint FILE", lint),
    ):
        report(
            name,
            f"{times.median_wall * 1000:.0f} ms median wall, "
            f"{times.best_wall * 1000:.0f} ms best, {times.median_cpu * 1000:.0f} ms cpu",
        )
    report("load average", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    record("7-version", version.best_wall * 1000, "best of 20 runs")
    # the best of 20 runs estimates an uncontended run; the median also counts time spent
    # waiting for a CPU that other processes hold
    assert lint.best_wall < 0.300


_IMPORTS = """
import sys
sys.argv = ["prosec", "lint", sys.argv[1]]
from prosec.compiler.cli import main
try:
    main()
except SystemExit:
    pass
print("heavy:", *(m for m in ("networkx", "jsonschema", "lark") if m in sys.modules))
"""


_CONFIG = """[lint]
strict = false
ignore = ["id_missing"]

[run]
jobs = 2

[render.default]
kind = "command"
command = "python3 renders/desk.py"
"""


def test_process_start_up_with_wiring(compiled: None, tmp_path: Path) -> None:
    """`prosec lint FILE` wires the file against the rest of its project: a 5 KB file
    without ProseScript, in a 50-file project, whole process, under 300 ms.

    Three figures: cold (`--no-cache`), the file edited before every run (what an editor
    hook or a pre-commit run meets: the neighbours' parses come from the lint cache, the
    file is parsed again and the project wired again; the aim is judged on this one), and
    nothing changed (the result comes from the cache)."""
    import subprocess

    path = wired_project(tmp_path / "wired")
    # a configured project: its prose.toml is checked without jsonschema (schema_fast)
    (tmp_path / "wired" / "prose.toml").write_text(_CONFIG, encoding="utf-8")
    env = {"PROSEC_CACHE_DIR": str(tmp_path / "cache")}
    cold = process_times([prosec_bin(), "lint", "--no-cache", str(path)], 20)
    edits = iter(range(1000))

    def edit() -> None:
        path.write_text(path.read_text(encoding="utf-8") + f"\nEdit {next(edits)}.\n")

    subprocess.run([prosec_bin(), "lint", str(path)], env={**os.environ, **env}, check=False)
    edited = process_times([prosec_bin(), "lint", str(path)], 20, before_each=edit, env=env)
    unchanged = process_times([prosec_bin(), "lint", str(path)], 20, env=env)
    for label, lint in (("--no-cache", cold), ("file edited", edited), ("unchanged", unchanged)):
        report(
            f"prosec lint FILE with wiring, {label} ({path.stat().st_size / 1024:.1f} KB, "
            f"{FILES}-file project)",
            f"{lint.median_wall * 1000:.0f} ms median wall, {lint.best_wall * 1000:.0f} ms best, "
            f"{lint.median_cpu * 1000:.0f} ms cpu",
        )
    report("load average", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    record(
        "7-lint-file",
        edited.best_wall * 1000,
        f"best of 20 runs, 50-file project, the file edited before each run "
        f"(--no-cache {cold.best_wall * 1000:.0f} ms, unchanged {unchanged.best_wall * 1000:.0f} ms)",
    )
    loaded = subprocess.run(
        [sys.executable, "-c", _IMPORTS, str(path)], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.splitlines()[-1] == "heavy:"  # no networkx, jsonschema or lark
    assert cold.best_wall < 0.300


def test_process_start_up_with_wiring_and_prose(compiled: None, tmp_path: Path) -> None:
    """The same 5 KB file in the same 50-file project, its `### Execution` a ```prose
    fence: lark, the shipped parse table, the lexer's first compiles, the script IR and
    its checks come on top, and the whole process still stays under 300 ms."""
    import subprocess

    path = wired_project(tmp_path / "wired", prose=True)
    (tmp_path / "wired" / "prose.toml").write_text(_CONFIG, encoding="utf-8")
    python = process_times([sys.executable, "-c", "pass"], 20)
    lint = process_times([prosec_bin(), "lint", "--no-cache", str(path)], 20)
    report(
        f"prosec lint FILE with wiring and a prose fence ({path.stat().st_size / 1024:.1f} KB, "
        f"{FILES}-file project)",
        f"{lint.median_wall * 1000:.0f} ms median wall, {lint.best_wall * 1000:.0f} ms best, "
        f"{lint.median_cpu * 1000:.0f} ms cpu",
    )
    report(
        "python -c pass, measured alongside",
        f"{python.median_wall * 1000:.0f} ms median wall, {python.best_wall * 1000:.0f} ms best",
    )
    report("load average", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    loaded = subprocess.run(
        [sys.executable, "-c", _IMPORTS, str(path)], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.splitlines()[-1] == "heavy: lark"  # the fence needs lark, nothing more
    assert lint.best_wall < 0.300
