"""Crash recovery: SIGKILL the runner inside commit-and-sign, then `prosec resume`."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from prosec.runtime.executor import CRASH_POINTS

from .project import Project, intent

EDGES = [("b", "g", "@atomic"), ("c", "g", "@atomic"), ("d", "b", "@atomic"), ("d", "c", "@atomic")]


def make(root: Path) -> Project:
    doc = intent({"g": {"wake_source": "external"}, "b": {}, "c": {}, "d": {}}, EDGES, ["g"])
    project = Project.create(root, doc)
    project.world("b", {"role": "left"})
    project.world("c", {"role": "right"})
    return project


def durable(project: Project) -> dict[str, bytes]:
    """Every durable ledger, published file and version blob (the world-model and chain)."""
    state = project.root / "state/world-model"
    return {
        str(path.relative_to(state)): path.read_bytes()
        for path in sorted(state.rglob("*"))
        if path.is_file()
    }


def only_run(project: Project) -> str:
    (run,) = [p.name for p in (project.root / "runs").iterdir()]
    return run


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_crash_during_cold_start_then_resume(tmp_path: Path, point: str) -> None:
    reference = make(tmp_path / "ref")
    assert reference.run()["failed"] == []
    crashed = make(tmp_path / "crash")
    killed = crashed.prosec("run", ".", env={"PROSEC_CRASH_AT": f"{point}:c"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    run_id = only_run(crashed)
    assert not crashed.log(run_id)[-1].startswith("---")
    resumed = crashed.prosec("resume", run_id, "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert durable(crashed) == durable(reference)
    run = crashed.run_dir(run_id)
    for node in "gbcd":  # each node committed exactly once in the run
        lines = (run / "receipts" / f"{node}.jsonl").read_text().splitlines()
        assert len(lines) == 1, node
    assert crashed.log(run_id)[-1].startswith("---end ")
    verify = crashed.prosec("receipts", "verify", ".")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert crashed.renders()["d"] == 1


@pytest.mark.parametrize("point", ["after-pending", "after-ledger", "after-publish"])
def test_crash_mid_wave_of_a_trigger_then_resume(tmp_path: Path, point: str) -> None:
    reference = make(tmp_path / "ref")
    reference.run()
    assert reference.prosec("trigger", "g", "--data", '{"n": 2}').returncode == 0
    crashed = make(tmp_path / "crash")
    crashed.run()
    before = {p.name for p in (crashed.root / "runs").iterdir()}
    killed = crashed.prosec(
        "trigger", "g", "--data", '{"n": 2}', env={"PROSEC_CRASH_AT": f"{point}:b"}
    )
    assert killed.returncode == -signal.SIGKILL
    (run_id,) = {p.name for p in (crashed.root / "runs").iterdir()} - before
    resumed = crashed.prosec("resume", run_id)
    assert resumed.returncode == 0, resumed.stderr
    assert durable(crashed) == durable(reference)
    assert crashed.published("d")["inputs"]["b"]["inputs"]["g"]["data"] == {"n": 2}


def test_a_new_run_after_a_crash_rolls_the_commit_forward(tmp_path: Path) -> None:
    reference = make(tmp_path / "ref")
    reference.run()
    crashed = make(tmp_path / "crash")
    killed = crashed.prosec("run", ".", env={"PROSEC_CRASH_AT": "after-ledger:b"})
    assert killed.returncode == -signal.SIGKILL
    assert (crashed.root / "state/world-model/b/pending.json").exists()
    status = crashed.prosec("status", ".", "--json")
    # b and c render in one wave: when they finish within the group window they commit
    # as one group, and a crash inside it leaves the whole group pending
    pending = json.loads(status.stdout)["pending_commits"]
    assert "b" in pending and set(pending) <= {"b", "c"}
    summary = crashed.run()
    assert summary["failed"] == []
    assert not (crashed.root / "state/world-model/b/pending.json").exists()
    assert durable(crashed) == durable(reference)


def test_resume_of_a_finished_run_is_a_no_op(tmp_path: Path) -> None:
    project = make(tmp_path / "p")
    run_id = project.run()["run_id"]
    result = project.prosec("resume", run_id)
    assert result.returncode == 0 and "already finished" in result.stdout


def _dead_pid() -> int:
    import subprocess

    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_a_crash_inside_run_creation_leaves_nothing_listed_and_is_cleaned(
    tmp_path: Path,
) -> None:
    """Issue 9: a run is created whole under a hidden name; what a crash mid-creation (or
    mid-write) leaves is never listed `interrupted` and the next runner removes it."""
    project = make(tmp_path / "p")
    project.run()
    half = project.root / "runs" / f".new-{_dead_pid()}-20260101-000000-abcdef"
    (half / "sources").mkdir(parents=True)
    (half / "compiled-intent.json").write_text("{}")
    leftovers = [
        project.root / "state/kv/.external.g.json.tmp-deadbeef",
        project.root / "state/world-model/b/.pending.json.tmp-0badf00d",
        project.root / "state/world-model/b/versions/.sha256_00.bin.tmp-12345678",
    ]
    for path in leftovers:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("partial")
    old = project.root / "state/world-model/b/.published.old-87654321"
    old.mkdir()
    dead = project.root / f"state/inbox/.0001-aaaaaa.json.tmp-aaaaaaaa-{_dead_pid()}"
    live = project.root / f"state/inbox/.0002-bbbbbb.json.tmp-bbbbbbbb-{os.getpid()}"
    dead.parent.mkdir(parents=True, exist_ok=True)
    for path in (dead, live):  # a trigger writes its wake without the lock
        path.write_text("partial")
    status = json.loads(project.prosec("status", ".", "--json").stdout)
    assert [r["state"] for r in status["runs"]] == ["complete"]
    assert project.run()["failed"] == []
    assert not half.exists() and not old.exists()
    assert not any(path.exists() for path in [*leftovers, dead])
    assert live.exists()  # its writer is alive: not a leftover
    live.unlink()
    assert project.prosec("receipts", "verify", ".").returncode == 0


def test_resume_binds_the_caller_inputs_the_run_was_given(tmp_path: Path) -> None:
    """Issue 9: `--input` values live in run.json; a run cut before its caller files
    were written resumes to the truth an uninterrupted run publishes."""
    from prosec.runtime import serve
    from prosec.runtime.session import EngineOptions, open_project

    from .crash.sweep import prosec, runtime_project, snapshot

    reference = runtime_project(tmp_path / "ref", "filesystem")
    assert prosec(reference.root, "run", ".", "--input", "topic=weather").returncode == 0
    cut = runtime_project(tmp_path / "cut", "filesystem")
    opened = open_project(cut.root)
    opened.bind_renders({})
    assert opened.backend.try_lock()
    run = opened.create_run("run", [], [], inputs={"topic": "weather"})  # then the crash
    opened.backend.unlock()
    assert json.loads((run.path / "run.json").read_text())["inputs"] == {"topic": "weather"}
    serve.resume(opened, run, EngineOptions(jobs=1))
    assert (run.path / "world-model/caller/topic.md").is_file()
    assert snapshot(cut.root, "filesystem", "runtime") == snapshot(
        reference.root, "filesystem", "runtime"
    )
