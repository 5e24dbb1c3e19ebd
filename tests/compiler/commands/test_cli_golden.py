"""Golden output of every command, on the newsroom project, through the real `prosec`.

What a user reads is pinned as syrupy snapshots (`--snapshot-update` after an intended
change, said so in the commit). Run ids, timestamps and the scratch folder are masked;
everything else is deterministic (one render at a time, a fresh build cache).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from ...conftest import CORPUS, Runner

RUN_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-z]{6}\b")
TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
ANSI = re.compile(r"\x1b\[")


class Golden:
    """Runs prosec in the scratch project and masks what varies between runs."""

    def __init__(self, run_prosec: Runner, root: Path, snapshot: Any) -> None:
        self.run_prosec, self.root, self.snapshot = run_prosec, root, snapshot

    def mask(self, text: str) -> str:
        for place in {str(self.root.resolve()), str(self.root)}:
            text = text.replace(place, "<ROOT>")
        text = RUN_ID.sub("<RUN>", text)
        return TIME.sub("<TIME>", text)

    def check(self, name: str, *args: str, code: int = 0, env: dict[str, str] | None = None) -> str:
        result = self.run_prosec(*args, cwd=self.root, env=env)
        assert result.returncode == code, result.stdout + result.stderr
        shown = f"$ prosec {' '.join(args)}\n--- stdout\n{result.stdout}--- stderr\n{result.stderr}"
        assert not ANSI.search(shown), "captured output must hold no colour codes"
        masked = self.mask(shown)
        assert masked == self.snapshot(name=name)
        return result.stdout


@pytest.fixture
def golden(
    run_prosec: Runner, tmp_path: Path, snapshot: Any, monkeypatch: pytest.MonkeyPatch
) -> Golden:
    for variable in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "PROSEC_DEBUG"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("PROSEC_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "newsroom"
    shutil.copytree(
        CORPUS / "newsroom", root, ignore=shutil.ignore_patterns("dist", "runs", "state")
    )
    return Golden(run_prosec, root, snapshot)


BREAKING = '{"breaking": ["Bridge reopens"], "features": ["Ferry crew"], "received_at": "08:00"}'
STORM = '{"breaking": ["Storm warning"], "features": ["Ferry crew"], "received_at": "09:00"}'


def test_every_command_says_what_it_did(golden: Golden) -> None:
    golden.check("lint", "lint", "src")
    golden.check("build", "build", "--offline-tools")
    golden.check("build-again", "build", "--offline-tools")
    golden.check("validate", "validate", "dist/manifest.next.json")
    golden.check("activate", "activate")
    golden.check("explain", "explain", "front-page")
    golden.check("graph", "graph")
    golden.check("install", "install")
    golden.check("preflight", "preflight")
    golden.check("run-cold", "run", "--jobs", "1", "--input", "audience=editors")
    golden.check("run-again", "run", ".", "--jobs", "1", "--input", "audience=editors")
    golden.check("trigger", "trigger", "wire-feed", ".", "--jobs", "1", "--data", BREAKING)
    golden.check(
        "trigger-root-alias", "trigger", "wire-feed", "--root", ".", "--jobs", "1", "--data", STORM
    )
    golden.check("trigger-same-data", "trigger", "wire-feed", "--jobs", "1", "--data", STORM)
    golden.check("inspect-moved", "inspect", "latest~1")
    golden.check("inspect-memo", "inspect", "latest", ".")
    golden.check("tick", "tick", "front-page", ".", "--jobs", "1")
    golden.check("resume-finished", "resume", "latest", ".")
    golden.check("status", "status")
    golden.check("receipts-list", "receipts", "list", "--node", "features-desk")
    golden.check("receipts-cost", "receipts", "cost")
    golden.check("receipts-verify", "receipts", "verify", ".")
    golden.check("db-prune", "db", "prune")
    golden.check("root-twice", "inspect", "latest", "runs", "--root", ".", code=2)
    # one test fails on purpose (corpus/newsroom/front-page.test.prose.md says why)
    golden.check("test", "test", ".", "--out", "test-runs", code=1)
    # the long-running ones: what they offer
    for command in ("serve", "devtools", "lsp"):
        golden.check(f"{command}-help", command, "--help")


def test_a_failed_render_names_its_log_by_full_path(golden: Golden) -> None:
    for args in (("build", "--offline-tools"), ("activate",)):
        golden.check(args[0], *args)
    render = "breaking-desk=command:python3 -c 'import sys; print(\"no wire today\"); sys.exit(4)'"
    out = golden.check("run-failed", "run", "--jobs", "1", "--render", render, code=1)
    assert "failed" in out
    log = golden.root / "runs"
    assert any(log.rglob("__render.log"))


@pytest.mark.parametrize(
    ("env", "coloured"),
    [({}, False), ({"FORCE_COLOR": "1"}, True), ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False)],
    ids=["captured", "force-color", "no-color-wins"],
)
def test_colour_only_on_a_terminal_or_when_forced(
    run_prosec: Runner,
    tmp_path: Path,
    env: dict[str, str],
    coloured: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for variable in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("PROSEC_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "p"
    shutil.copytree(
        CORPUS / "newsroom", root, ignore=shutil.ignore_patterns("dist", "runs", "state")
    )
    for args in (("build", "--offline-tools"), ("activate",)):
        assert run_prosec(*args, cwd=root).returncode == 0
    result = run_prosec("status", cwd=root, env=env)
    assert result.returncode == 0, result.stderr
    assert bool(ANSI.search(result.stdout)) is coloured


def test_run_and_inspect_count_the_same_waves(golden: Golden) -> None:
    import json

    for args in (("build", "--offline-tools"), ("activate",)):
        assert golden.run_prosec(*args, cwd=golden.root).returncode == 0
    steps = [
        ("run", "--input", "audience=editors"),
        ("trigger", "wire-feed", "--data", BREAKING),
        ("trigger", "wire-feed", "--data", BREAKING),  # same data: a memo hit, no wave
        ("tick", "front-page"),
    ]
    counted = []
    for step in steps:
        result = golden.run_prosec(*step, "--json", cwd=golden.root)
        assert result.returncode == 0, result.stderr
        ran = json.loads(result.stdout)
        shown = golden.run_prosec("inspect", ran["run_id"], "--json", cwd=golden.root)
        inspected = json.loads(shown.stdout)
        assert len(inspected["waves"]) == ran["waves"], (step, inspected["waves"])
        counted.append(ran["waves"])
    assert counted == [4, 4, 0, 1]  # the tick renders front-page; nothing moved
    status = json.loads(golden.run_prosec("status", "--json", cwd=golden.root).stdout)
    wakes = {node["node"]: (node["wake_source"], node["last_wake"]) for node in status["nodes"]}
    # the declared source stays; the last wake says what actually woke the node
    assert wakes["front-page"] == ("self", "cadence")
    assert wakes["editor-briefing"] == ("input", "input from front-page")
