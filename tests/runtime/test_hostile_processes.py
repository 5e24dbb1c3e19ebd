"""Renders never outlive their runner (issue 9): a runner killed mid-render leaves
nothing that can write into a later execution; Ctrl-C and SIGTERM kill the renders
before the runner exits."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from prosec.runtime.renders.process import GATE

from .project import PROSEC, Project, intent

# "stale" mode: publish, say so, then keep writing into the staging folder for a minute
# (recreating it if it goes away), like a render that never noticed its runner died.
STALE = r"""
import json, os, pathlib, time
root = pathlib.Path(os.environ["PROSEC_ROOT"])
out = pathlib.Path(os.environ["PROSEC_OUTPUT"])
mode = (root / "mode").read_text().strip()
with open(root / "pids", "a") as pids:
    pids.write(f"{os.getpid()}\n")
(out / "first.json").write_text(json.dumps({"from": mode}))
if mode == "stale":
    (root / "started").write_text("1")
    for i in range(1200):
        time.sleep(0.05)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"late-{i}.json").write_text("{}")
else:
    time.sleep(1.5)  # long enough for a stale writer to interfere, were it alive
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


def wait_dead(pids: list[int], seconds: float = 10) -> list[int]:
    deadline = time.monotonic() + seconds
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [pid for pid in pids if alive(pid)]


def stale_project(root: Path) -> Project:
    project = Project.create(root, intent({"a": {}}, []))
    (root / "renders/stale.py").write_text(STALE)
    (root / "prose.toml").write_text(
        f'[render.default]\nkind = "command"\ncommand = ["{sys.executable}", "renders/stale.py"]\n'
    )
    (root / "mode").write_text("stale")
    return project


def start_runner(project: Project) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "PROSEC_CRASH_AT"}
    runner = subprocess.Popen(
        [str(PROSEC), "run", ".", "--json"],
        cwd=project.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (project.root / "started").exists():
        assert runner.poll() is None, runner.communicate()
        assert time.monotonic() < deadline, "the render never started"
        time.sleep(0.05)
    return runner


def render_pids(project: Project) -> list[int]:
    return [int(line) for line in (project.root / "pids").read_text().split()]


def test_resume_kills_the_render_a_killed_runner_left_and_publishes_one_execution(
    tmp_path: Path,
) -> None:
    project = stale_project(tmp_path / "p")
    runner = start_runner(project)
    runner.send_signal(signal.SIGKILL)
    runner.communicate()
    (orphan,) = render_pids(project)
    time.sleep(0.3)
    assert alive(orphan), "the render should outlive the SIGKILLed runner until resume"
    (project.root / "mode").write_text("fresh")
    resumed = project.prosec("resume", "latest", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert "killed a render an interrupted runner left" in resumed.stderr
    assert wait_dead([orphan], 5) == []
    published = project.root / "state/world-model/a/published"
    assert sorted(p.name for p in published.iterdir()) == [".version", "first.json"]
    assert json.loads((published / "first.json").read_text()) == {"from": "fresh"}
    run = project.run_dir(json.loads(resumed.stdout)["run_id"])
    assert not any((run / "procs").iterdir())
    # the orphan's attempt folder is gone and nothing recreated it after the kill
    time.sleep(0.3)
    assert not any(p.name.startswith("late-") for p in (run / "staging").rglob("*"))
    verify = project.prosec("receipts", "verify", ".")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_new_run_also_kills_what_a_killed_runner_left(tmp_path: Path) -> None:
    project = stale_project(tmp_path / "p")
    runner = start_runner(project)
    runner.send_signal(signal.SIGKILL)
    runner.communicate()
    (orphan,) = render_pids(project)
    (project.root / "mode").write_text("fresh")
    result = project.prosec("run", ".", "--json")
    assert result.returncode == 0, result.stderr
    assert "killed a render an interrupted runner left" in result.stderr
    assert wait_dead([orphan], 5) == []


@pytest.mark.parametrize(("sent", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_sigterm_and_ctrl_c_kill_the_renders_before_the_runner_exits(
    tmp_path: Path, sent: signal.Signals, code: int
) -> None:
    project = stale_project(tmp_path / "p")
    runner = start_runner(project)
    started = time.monotonic()
    runner.send_signal(sent)
    _, stderr = runner.communicate(timeout=30)
    assert time.monotonic() - started < 15
    assert runner.returncode == code, stderr
    assert "Traceback" not in stderr
    (render,) = render_pids(project)
    assert wait_dead([render], 2) == []
    run = next((project.root / "runs").iterdir())
    assert not any((run / "procs").iterdir())
    (project.root / "mode").write_text("fresh")
    resumed = project.prosec("resume", "latest", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["rendered"] == ["a"]


def test_a_runner_killed_before_the_gate_opens_starts_nothing(tmp_path: Path) -> None:
    """The shell behind the gate reads end-of-file when the runner dies before it
    recorded the group, and exits without running the render."""
    marker = tmp_path / "ran"
    read_end, write_end = os.pipe()
    shell = subprocess.Popen(
        ["/bin/sh", "-c", GATE, os.devnull, "touch", str(marker)],
        stdin=read_end,
        start_new_session=True,
    )
    os.close(read_end)
    os.close(write_end)  # what the kernel does when the runner dies
    assert shell.wait(timeout=10) == 125
    assert not marker.exists()


def test_a_process_that_escaped_the_group_cannot_hold_the_runner(tmp_path: Path) -> None:
    """A render whose child leaves the session (setsid) and keeps writing to the log
    pipe: the runner stops copying a second after the render ended."""
    project = Project.create(tmp_path / "p", intent({"a": {}}, []))
    (project.root / "renders/escape.py").write_text(
        "import os, pathlib, sys\n"
        "out = pathlib.Path(os.environ['PROSEC_OUTPUT'])\n"
        "(out / 't.json').write_text('1')\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    (pathlib.Path(os.environ['PROSEC_ROOT']) / 'escaped.pid').write_text(str(os.getpid()))\n"
        "    while True:\n"
        "        os.write(1, b'still here\\n' * 100)\n"
        "os._exit(0)\n"
    )
    started = time.monotonic()
    try:
        summary = project.run("--render", f"a=command:{sys.executable} renders/escape.py")
        assert summary["rendered"] == ["a"]
        assert time.monotonic() - started < 60
    finally:
        pid_file = project.root / "escaped.pid"
        deadline = time.monotonic() + 10
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


# Each execution writes its parts one by one, named and tagged by its pid: an artifact
# whose parts carry two pids mixes two executions.
PARTS = r"""
import json, os, pathlib, time
root = pathlib.Path(os.environ["PROSEC_ROOT"])
out = pathlib.Path(os.environ["PROSEC_OUTPUT"])
with open(root / "pids", "a") as pids:
    pids.write(f"{os.getpid()}\n")
for i in range(15):
    out.mkdir(parents=True, exist_ok=True)
    (out / f"part-{os.getpid()}-{i}.json").write_text(json.dumps({"pid": os.getpid()}))
    time.sleep(0.2)
"""


@pytest.mark.slow
def test_random_kills_never_leave_a_writer_or_a_mixed_artifact(tmp_path: Path) -> None:
    import random

    rng = random.Random(9)
    trials = held = 0
    for trial in range(20):
        root = tmp_path / f"t{trial}"
        edges = [("b", "a", "@atomic"), ("c", "a", "@atomic")]
        project = Project.create(root, intent({"a": {}, "b": {}, "c": {}}, edges))
        (root / "renders/parts.py").write_text(PARTS)
        (root / "prose.toml").write_text(
            f'[render.default]\nkind = "command"\n'
            f'command = ["{sys.executable}", "renders/parts.py"]\n'
        )
        env = {k: v for k, v in os.environ.items() if k != "PROSEC_CRASH_AT"}
        runner = subprocess.Popen(
            [str(PROSEC), "run", "."],
            cwd=root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(1.0, 4.0))
        runner.kill()
        runner.wait()
        trials += 1
        pids_file = root / "pids"
        before = [int(p) for p in pids_file.read_text().split()] if pids_file.exists() else []
        orphans = [pid for pid in before if alive(pid)]
        if not (root / "runs").exists() or not any((root / "runs").iterdir()):
            continue
        resumed = project.prosec("resume", "latest", "--json")
        assert resumed.returncode in (0, 1), resumed.stderr
        assert wait_dead(orphans, 0.5) == [], f"trial {trial}: a render outlived its runner"
        pids = [int(p) for p in pids_file.read_text().split()]
        assert wait_dead(pids, 5) == [], f"trial {trial}: a render outlived its runner"
        for node in "abc":
            published = root / "state/world-model" / node / "published"
            if published.exists():
                writers = {
                    json.loads(part.read_text())["pid"] for part in published.glob("part-*.json")
                }
                assert len(writers) == 1, f"trial {trial}: {node} mixes executions {writers}"
                assert len(list(published.glob("part-*.json"))) == 15
        verify = project.prosec("receipts", "verify", ".")
        assert verify.returncode == 0, verify.stdout + verify.stderr
        held += 1
    print(f"\n[random kills] {trials} trials, {held} resumed and held, 0 broke")
    assert held >= 12


def test_survivors_are_only_the_groups_of_dead_runners_still_the_same(tmp_path: Path) -> None:
    """A group is killed when its runner is gone and the group is still the render's
    (its leader's start time, or a member carrying the render's marks); a live runner's
    renders (another backend on the same root) and a reused group id are left alone."""
    from prosec.runtime.renders import process

    def sleeper(marked: bool) -> subprocess.Popen[bytes]:
        env = {"PATH": os.environ["PATH"]}
        if marked:
            env |= {"PROSEC_RUN_ID": "r1", "PROSEC_NODE": "n"}
        return subprocess.Popen(["sleep", "60"], env=env, start_new_session=True)

    gone = subprocess.Popen(["true"])
    gone.wait()
    live_runner = {"runner": os.getpid(), "runner_start": process._start_time(os.getpid())}
    dead_runner = {"runner": gone.pid, "runner_start": 1}
    cases = {
        "spared-live-runner": (sleeper(True), live_runner, True),
        "killed-same-leader": (sleeper(False), dead_runner, True),
        "killed-marked-member": (sleeper(True), dead_runner, False),
        "spared-reused-id": (sleeper(False), dead_runner, False),
    }
    procs = tmp_path / "runs" / "r1" / process.PROCS
    procs.mkdir(parents=True)
    for name, (child, runner, same_start) in cases.items():
        start = process._start_time(child.pid)
        record = {
            "pgid": child.pid,
            "run_id": "r1",
            "node": "n",
            "attempt": name,
            "boot": process._boot_id(),
            "start": start if same_start else (start or 0) + 12345,
            **runner,
        }
        (procs / f"n.{name}.json").write_text(json.dumps(record))
    try:
        killed = process.kill_survivors(tmp_path / "runs")
        assert len(killed) == 2
        for name, (child, _, _) in cases.items():
            if name.startswith("killed"):
                assert child.wait(timeout=10) == -signal.SIGKILL, name
                assert not (procs / f"n.{name}.json").exists()
            else:
                assert child.poll() is None, name
        assert (procs / "n.spared-live-runner.json").exists()
        assert not (procs / "n.spared-reused-id.json").exists()  # not ours: forgotten
    finally:
        for child, _, _ in cases.values():
            child.kill()
            child.wait()
