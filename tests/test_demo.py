"""The newsroom demo end to end: build, activate, run, then triggers that move one facet."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import CORPUS, Runner, prosec_bin

pytestmark = pytest.mark.slow  # the whole demo, through the real CLI

NEWSROOM = CORPUS / "newsroom"


@pytest.fixture(autouse=True)
def build_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's builds keep their cache in the test's directory, not the user's."""
    monkeypatch.setenv("PROSEC_CACHE_DIR", str(tmp_path / "build-cache"))


def _inspect(run_prosec: Runner, root: Path, ref: str) -> dict[str, list[str]]:
    result = run_prosec("inspect", ref, "--json", cwd=root)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    by_status: dict[str, list[str]] = {}
    for event in data["events"]:
        by_status.setdefault(event["status"], []).append(event["node"])
    return by_status


def _trigger(run_prosec: Runner, root: Path, breaking: list[str], at: str) -> None:
    data = {"breaking": breaking, "features": ["A day with the ferry crew"], "received_at": at}
    result = run_prosec("trigger", "wire-feed", "--data", json.dumps(data), cwd=root)
    assert result.returncode == 0, result.stderr


def test_only_the_moved_facets_subscribers_render(run_prosec: Runner, tmp_path: Path) -> None:
    root = tmp_path / "newsroom"
    shutil.copytree(NEWSROOM, root, ignore=shutil.ignore_patterns("dist", "runs", "state"))
    for args in (("build", "--offline-tools"), ("activate",)):
        assert run_prosec(*args, cwd=root).returncode == 0
    assert run_prosec("run", "--input", "audience=editors", cwd=root).returncode == 0
    cold = _inspect(run_prosec, root, "latest")
    assert set(cold["rendered"]) == {
        "wire-feed",
        "breaking-desk",
        "features-desk",
        "front-page",
        "editor-briefing",
    }
    _trigger(run_prosec, root, ["Bridge reopens"], "08:00")
    _trigger(run_prosec, root, ["Storm warning", "Bridge reopens"], "09:00")
    moved = _inspect(run_prosec, root, "latest")
    assert set(moved["rendered"]) == {"wire-feed", "breaking-desk", "front-page", "editor-briefing"}
    assert "features-desk" not in json.dumps(moved)
    _trigger(run_prosec, root, ["Storm warning", "Bridge reopens"], "09:05")
    quiet = _inspect(run_prosec, root, "latest")
    assert quiet == {"skipped": ["wire-feed"]}
    assert run_prosec("receipts", "verify", ".", cwd=root).returncode == 0


def _demo(folder: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PROSEC": prosec_bin(), "PROSEC_DEMO_DIR": str(folder), **env}
    for variable in ("NO_COLOR", "FORCE_COLOR"):
        if variable not in env:
            environ.pop(variable, None)
    return subprocess.run(
        [str(NEWSROOM / "demo.sh")], capture_output=True, text=True, env=environ, timeout=300
    )


def test_demo_script_tells_the_story(tmp_path: Path) -> None:
    if shutil.which("dot") is None:
        pytest.fail("the demo test needs Graphviz's `dot`: apt-get install graphviz", pytrace=False)
    result = _demo(tmp_path / "demo")
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    work = tmp_path / "demo" / "newsroom"
    assert f"the scratch project is {work} (kept afterwards" in out
    assert "\x1b[" not in out + result.stderr  # captured: no colour codes
    # each trigger's payload, as sent
    for name in ("1-first-stories", "2-storm-warning", "3-same-news-later"):
        payload = json.loads((work / "triggers" / f"{name}.json").read_text())
        assert f"payload (triggers/{name}.json): {json.dumps(payload)}" in out
    # who woke and why, and who stayed asleep
    assert "stayed asleep, nothing they read moved: features-desk" in out
    assert "breaking-desk: rendered — woken by wire-feed; moved @atomic" in out
    assert (
        "wire-feed: skipped — woken by a trigger; it rendered, but nothing material changed" in out
    )
    # the final node's truth, and the graph as an SVG the user can open
    assert (
        'editor-briefing/published/briefing.json: {"audience": "editors", "lead": "Storm warning"}'
        in out
    )
    assert (work / "graph.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
    assert f"the graph, drawn by Graphviz: {work / 'graph.svg'}" in out
    assert "Results: 2 passed, 1 failed, 0 errors" in out
    assert "test-front-page-order fails on purpose" in out
    assert (work / "test-runs" / "test-breaking-desk").is_dir()
    assert out.splitlines()[-1] == (
        f"-- the project stays in {work}: cd there and try prosec status, prosec inspect latest~2"
    )
    # the folder stays, and the next demo reuses it, starting cold again
    assert (work / "state").is_dir()
    again = _demo(tmp_path / "demo", FORCE_COLOR="1", DOT="no-such-dot")
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"reusing the scratch project {work}" in again.stdout
    assert "5 rendered, 0 skipped, 0 failed in 4 waves" in again.stdout
    assert "\x1b[1m== " in again.stdout  # FORCE_COLOR: headings in bold
    # without Graphviz: the Mermaid text, with a note saying how to see it
    assert "flowchart LR" in again.stdout
    assert f"{work / 'graph.mmd'}; paste it into any Mermaid viewer" in again.stdout
    assert (work / "graph.mmd").read_text().startswith("flowchart LR")
    assert not (work / "graph.svg").exists()


def test_the_tea_timer_demo_runs_a_lone_function_with_inputs(tmp_path: Path) -> None:
    environ = {**os.environ, "PROSEC": prosec_bin(), "PROSEC_DEMO_DIR": str(tmp_path)}
    script = NEWSROOM.parent / "tea-timer" / "demo.sh"
    result = subprocess.run([str(script)], capture_output=True, text=True, env=environ, timeout=300)
    assert result.returncode == 0, result.stderr
    assert (
        '"minutes": 3,\n  "advice": "Use water just off the boil, around 80 °C."' in result.stdout
    )
    assert '"advice": "Use water at a rolling boil."' in result.stdout
    assert "missing required input" in result.stderr and "strength:" in result.stderr
    assert "3→ tea-timer ✓" in result.stdout
    assert not (tmp_path / "tea-timer" / "dist").exists()
    assert "corpus/tea-timer/demo.sh" in (NEWSROOM.parent / "demo.sh").read_text()
