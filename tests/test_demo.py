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


def test_demo_script_runs_clean() -> None:
    env = {**os.environ, "PROSEC": prosec_bin()}
    result = subprocess.run(
        [str(NEWSROOM / "demo.sh")], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok" in result.stdout.splitlines()[-1]
