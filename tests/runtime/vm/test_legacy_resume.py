"""`prosec resume` of a legacy `.prose/runs/{id}` run (seed 000): it continues as the
current-layout run `runs/{id}/` from `state.md` and `bindings/`, no finished step done
again: root-scope, anonymous and block-scoped bindings (`result__41`, `result__42`, the
recursion's discretion answer inferred from them) are taken, the rest is run."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ...conftest import REPO
from ..project import PROSEC
from .test_legacy_run import FAKE_AGENT, SUMMARIZE

LEGACY = REPO / "tests" / "data" / "legacy"
CUT = "20260115-143052-a7b3c9"
DONE = "20260114-091500-k2m4p6"
# the steps the interrupted run had not finished: the retried parallel branch, the
# question inside the second split, the loop, resume: and the output
TODO = [
    "main/10",
    "main/5|1",
    "main/7#split/1.0/0#split/1?0",
    "main/8@0/0",
    "main/8@0?",
    "main/8@1/0",
    "main/8@1?",
    "main/9",
]


def harbour(tmp: Path, table: dict[str, Any] | None = None) -> Path:
    shutil.copytree(LEGACY, tmp / "legacy")
    root = tmp / "legacy" / "tides"
    deps = root / "deps/github.com/openprose/prose/packages/std"
    deps.mkdir(parents=True)
    (deps / "summarize.prose.md").write_text(SUMMARIZE)
    table = table or {"answers": {"the berth plan is settled": [False, True]}}
    (root / "table.json").write_text(json.dumps(table))
    command = json.dumps([sys.executable, str(FAKE_AGENT), "table.json", "agent.log"])
    (root / "prose.toml").write_text(f'[render.default]\nkind = "agent"\ncommand = {command}\n')
    return root


def prosec(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(root.parent / "home")}
    return subprocess.run(
        [str(PROSEC), *args], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )


def steps(root: Path) -> list[str]:
    log = root / "agent.log"
    return (
        sorted(line.split(" ")[2] for line in log.read_text().splitlines()) if log.exists() else []
    )


def tree(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def journal(run: Path) -> dict[str, Any]:
    lines = (run / "vm/journal.jsonl").read_text().splitlines()
    return {e["key"]: e["value"] for e in map(json.loads, lines)}


def binding(root: Path, name: str) -> str:
    text = (root / ".prose/runs" / CUT / "bindings" / f"{name}.md").read_text()
    return text.partition("\n---\n")[2].strip("\n")


def test_an_interrupted_legacy_run_resumes_without_redoing_a_step(tmp_path: Path) -> None:
    root = harbour(tmp_path)
    before = tree(root / ".prose")
    result = prosec(root, "resume", CUT, "--json")
    assert result.returncode == 0, result.stderr
    assert "6 finished steps taken from" in result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["ok"] and outcome["run_id"] == CUT
    assert outcome["result"].startswith("session tides: Write the notice to mariners")
    assert steps(root) == TODO  # only what the legacy run had not finished
    run = root / "runs" / CUT
    done = journal(run)
    assert done["main/3"] == {"ok": binding(root, "readings")}
    assert done["main/4"] == {"ok": binding(root, "anon_001")}
    assert done["main/5|0"] == {"ok": binding(root, "high")}
    assert done["main/7#split/0"] == {"ok": binding(root, "result__41")}
    assert done["main/7#split/1?0"] == {"ok": True}  # the recursion happened: 42 exists
    assert done["main/7#split/1.0/0#split/0"] == {"ok": binding(root, "result__42")}
    info = json.loads((run / "run.json").read_text())
    assert info["legacy"] == "tides.prose" and info["legacy_run"] == f".prose/runs/{CUT}"
    assert info["inputs"] == {"station": "Gauge 7, north breakwater"}
    assert (run / "sources/tides.prose").read_bytes() == (
        root / ".prose/runs" / CUT / "program.prose"
    ).read_bytes()
    assert (run / "root.prose.md").read_text().startswith("---\nname: tides\nkind: function\n")
    memory = run / "agents/harbormaster"
    assert sorted(p.name for p in memory.iterdir()) == [
        "harbormaster-001.md",
        "harbormaster-002.md",
        "harbormaster-003.md",  # the resumed `resume: harbormaster` session
        "memory.md",
    ]
    assert tree(root / ".prose") == before  # the legacy run is left as it was
    again = prosec(root, "resume", f".prose/runs/{CUT}")
    assert again.returncode == 0 and "already finished" in again.stdout
    assert steps(root) == TODO
    shown = prosec(root, "inspect", "latest", "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["run_id"] == CUT


def test_a_complete_legacy_run_has_nothing_to_resume(tmp_path: Path) -> None:
    root = harbour(tmp_path)
    result = prosec(root, "resume", DONE)
    assert result.returncode == 0 and "already finished" in result.stdout
    assert not (root / "runs").exists() and steps(root) == []


def test_the_latest_legacy_run_resumes_and_a_kill_midway_loses_nothing(tmp_path: Path) -> None:
    root = harbour(
        tmp_path, {"answers": {"the berth plan is settled": [False, True]}, "sleep": 0.3}
    )
    env = {**os.environ, "HOME": str(root.parent / "home")}
    process = subprocess.Popen(
        [str(PROSEC), "resume", "latest"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    lines = root / "runs" / CUT / "vm/journal.jsonl"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and process.poll() is None:
        if lines.is_file() and len(lines.read_text().splitlines()) >= 10:
            break
        time.sleep(0.02)
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    finished = prosec(root, "resume", CUT, "--json")
    assert finished.returncode == 0, finished.stderr
    # (on a machine fast enough to finish before the kill, the run is already complete)
    assert "already finished" in finished.stdout or json.loads(finished.stdout)["ok"]
    done = steps(root)
    assert sorted(set(done)) == TODO  # every remaining step ran
    # at most the step in flight when the kill came is run twice, never a finished one
    assert len(done) - len(set(done)) <= 1
    assert not {"main/3", "main/4", "main/5|0", "main/7#split/0"} & set(done)


def test_a_loop_resumes_after_its_finished_iterations(tmp_path: Path) -> None:
    """notice/: a loop in its third of four iterations (`iteration: 3/4`): the two
    finished iterations are taken (their sessions, anon_001 and anon_002, and the
    `until` answers that kept the loop going), and of the current one only what the
    trace does not mark done: its draft (`# --> bindings/draft.md`) is taken, the
    chart check it was executing and the `until` question run."""
    root = harbour(tmp_path, {"answers": {"the draft reads well": [False, False, True]}})
    notice = root.parent / "notice"
    for name in ("prose.toml", "table.json"):
        shutil.copy(root / name, notice / name)
    shown = prosec(notice, "inspect", "20260116-101500-n0t1ce", "--json")
    data = json.loads(shown.stdout)
    assert data["constructs"][0]["items"]["iteration"] == "3/4"
    assert {b["name"]: b["kind"] for b in data["bindings"]}["harbour"] == "const"
    result = prosec(notice, "resume", "latest", "--json")
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["result"].startswith("session notice: Finish the notice")
    assert steps(notice) == sorted(["main/3@2/1", "main/3@2?", "main/4"])
    done = journal(notice / "runs/20260116-101500-n0t1ce")
    draft = (notice / ".prose/runs/20260116-101500-n0t1ce/bindings/draft.md").read_text()
    third = {"ok": draft.partition("\n---\n")[2].strip()}
    assert done["main/3@0/0"] == done["main/3@1/0"] == done["main/3@2/0"] == third
    assert done["main/3@0/1"] == {"ok": "The first draft names the wrong buoy."}
    assert done["main/3@1/1"] == {"ok": "The second draft omits the working hours."}
    assert done["main/3@0?"] == done["main/3@1?"] == {"ok": False}
    assert "Gather notes on The dredging" not in (notice / "agent.log").read_text()
