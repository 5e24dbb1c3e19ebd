"""`prosec resume` of the legacy survey run (seed 000): block invocations take the
execution ids `state.md` and `bindings/` record for them, not ids guessed in call order
(a parallel whose second branch started first, so holds the smaller id), and a
half-finished nested import (`imports/std--briefing/`) continues from its own
`state.md` and `bindings/`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ...conftest import REPO
from ..project import PROSEC
from .support import FAKE_AGENT

LEGACY = REPO / "tests" / "data" / "legacy"
RUN = "20260117-080000-s0rv3y"
SOUTH = "The south quay's fenders are worn at berth 3."
OUTLINE = "1. Tides  2. Quays  3. Works in progress"


def survey(tmp: Path) -> Path:
    root = tmp / "survey"
    shutil.copytree(LEGACY / "survey", root)
    (root / "table.json").write_text("{}")
    command = json.dumps([sys.executable, str(FAKE_AGENT), "table.json", "agent.log"])
    (root / "prose.toml").write_text(f'[render.default]\nkind = "agent"\ncommand = {command}\n')
    return root


def prosec(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(root.parent / "home")}
    return subprocess.run(
        [str(PROSEC), *args], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )


def journal(path: Path) -> dict[str, Any]:
    lines = path.read_text().splitlines()
    return {e["key"]: e["value"] for e in map(json.loads, lines)}


def performed(root: Path) -> list[str]:
    log = root / "agent.log"
    return sorted(line.split(" ")[2] for line in log.read_text().splitlines())


def test_a_resumed_run_maps_each_invocation_to_its_legacy_execution_id(tmp_path: Path) -> None:
    root = survey(tmp_path)
    result = prosec(root, "resume", RUN, "--json")
    assert result.returncode == 0, result.stderr
    done = journal(root / "runs" / RUN / "vm/journal.jsonl")
    # south (branch 1) started first: execution 41, finished; north (branch 0) is the
    # executing frame 42 of the call stack, its note not written yet
    assert done["main/3|1#inspect/0"] == {"ok": SOUTH}
    ran = performed(root)
    assert "main/3|0#inspect/0" in ran and "main/3|1#inspect/0" not in ran
    outcome = json.loads(result.stdout)
    assert "Inspect the north quay" in outcome["result"]
    # the inspector's memory came along; its segments were past 999 (four digits)
    memory = root / "runs" / RUN / "agents/inspector"
    assert sorted(p.name for p in memory.iterdir()) == [
        "inspector-1000.md",
        "inspector-1001.md",  # north's session, the one resumed
        "inspector-999.md",
        "memory.md",
    ]


def test_the_survey_run_inspects_with_its_markers(tmp_path: Path) -> None:
    """A bare `# (complete)` trace marker and four-digit agent segments (seed 000)."""
    root = survey(tmp_path)
    shown = prosec(root, "inspect", RUN, "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["problems"] == [] and data["status"] == "interrupted"
    (use,) = [e for e in data["trace"] if e["code"].startswith("use ")]
    assert {k: v for k, v in use.items() if k not in ("line", "code")} == {"status": "complete"}
    (inspector,) = [a for a in data["agents"] if a["name"] == "inspector"]
    assert [s["number"] for s in inspector["segments"]] == [999, 1000]
    assert inspector["segments"][1]["prompt"] == "Inspect the south quay"
    assert [(i["handle"], i["slug"], i["status"]) for i in data["imports"]] == [
        ("std", "briefing", "interrupted")
    ]


def test_custom_scope_agent_memory_is_read_inside_the_project_only(tmp_path: Path) -> None:
    """seed 000's custom scope, `persist: "path"`: the memory in that folder of the
    project, read as the other scopes are; a path out of the project is a problem."""
    root = survey(tmp_path)
    program = root / ".prose/runs" / RUN / "program.prose"
    program.write_text(
        program.read_text()
        + '\nagent logkeeper:\n  persist: "harbour/logs"   # custom\n  prompt: "You keep logs"\n'
        + 'agent stray:\n  persist: "../elsewhere"\n'
    )
    logs = root / "harbour/logs"
    logs.mkdir(parents=True)
    (logs / "memory.md").write_text("# Agent Memory: logkeeper\n\nTwo surveys logged.\n")
    (logs / "logkeeper-001.md").write_text('# Segment 001\n\nprompt: "Log the survey"\n')
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere/memory.md").write_text("not the project's")
    data = json.loads(prosec(root, "inspect", RUN, "--json").stdout)
    (custom,) = [a for a in data["agents"] if a["scope"] == "custom"]
    assert (custom["name"], custom["path"]) == ("logkeeper", "harbour/logs")
    assert custom["memory"].startswith("# Agent Memory: logkeeper")
    assert [(s["number"], s["prompt"]) for s in custom["segments"]] == [(1, "Log the survey")]
    assert [p for p in data["problems"] if "stray" in p] == [
        f"{program}: agent stray's memory '../elsewhere' is outside the project"
    ]
    text = prosec(root, "inspect", RUN).stdout
    assert "agent logkeeper (custom): memory, 1 segment" in text


def test_a_half_finished_import_resumes_from_its_own_state(tmp_path: Path) -> None:
    root = survey(tmp_path)
    result = prosec(root, "resume", RUN, "--json")
    assert result.returncode == 0, result.stderr
    ran = performed(root)
    assert "main/3|2>main/1" in ran  # the briefing itself, still to do
    assert "main/3|2>main/0" not in ran  # the outline the import had written
    nested = root / "runs" / RUN / "imports/briefer--briefing"
    assert json.loads((nested / "vm/call.json").read_text()) == {"key": "main/3|2"}
    assert journal(nested / "vm/journal.jsonl")["main/3|2>main/0"] == {"ok": OUTLINE}
    assert f"Write the briefing from {OUTLINE}" in json.loads(result.stdout)["result"]


def _seeded(root: Path, edit: Any) -> dict[str, Any]:
    from prosec.compiler.legacy_compile import compile_legacy
    from prosec.runtime.inspection import inspect_run
    from prosec.runtime.vm.legacy_seed import seed_steps

    folder = root / ".prose/runs" / RUN
    raw, compiled, _ = compile_legacy(root, folder)
    data = inspect_run(folder)
    edit(data)
    source = compiled[str(raw["vm"]["target"])].decode()
    return {key: value for key, _, value in seed_steps(raw["vm"], data, source)}


@pytest.mark.parametrize(
    "evidence",
    ["call stack and trace", "parameter bindings"],
)
def test_either_record_of_the_ids_is_enough(tmp_path: Path, evidence: str) -> None:
    """The call stack with the trace's EXECUTING branch, or the invocations' `kind:
    input` parameter bindings (`zone__41.md`), each place south at 41 on its own."""
    root = survey(tmp_path)

    def edit(data: dict[str, Any]) -> None:
        if evidence == "parameter bindings":
            data["call_stack"] = []
            for entry in data["trace"]:
                entry.pop("status", None)
        else:
            data["bindings"] = [b for b in data["bindings"] if b["name"] != "zone"]

    seeded = _seeded(root, edit)
    assert seeded["main/3|1#inspect/0"] == {"ok": SOUTH}
    assert "main/3|0#inspect/0" not in seeded


PIER = """# Bollard check (a legacy .prose program, written for prosec's tests)

parallel for zone in ["east", "west", "pier"]:
  repeat 400:
    let pace = zone
  session "Check the {zone} bollards"
"""
PIER_STATE = """# Execution State

run: 20260118-090000-p1er0k
program: pier.prose
started: 2026-01-18T09:00:00Z
updated: 2026-01-18T09:03:00Z

## Execution Trace

```prose
parallel for zone in ["east", "west", "pier"]:   # <-- EXECUTING
  repeat 400:
    let pace = zone
  session "Check the {zone} bollards"
```
"""


def test_the_probe_meets_parallel_iterations_in_order(tmp_path: Path) -> None:
    """`anon_NNN` bindings of a `parallel for` go to its iterations in order, the same
    on every probe however the threads run (each iteration walks a `repeat` first, long
    enough for the threads to interleave)."""
    from prosec.compiler.legacy_compile import compile_legacy
    from prosec.runtime.inspection import inspect_run
    from prosec.runtime.vm.legacy_seed import seed_steps

    folder = tmp_path / ".prose/runs/20260118-090000-p1er0k"
    (folder / "bindings").mkdir(parents=True)
    (folder / "program.prose").write_text(PIER)
    (folder / "state.md").write_text(PIER_STATE)
    for number, text in ((1, "east: sound"), (2, "west: one loose")):
        (folder / f"bindings/anon_00{number}.md").write_text(
            f"# anon_00{number}\n\nkind: let\n\n---\n\n{text}\n"
        )
    raw, compiled, _ = compile_legacy(tmp_path, folder)
    data = inspect_run(folder)
    source = compiled[str(raw["vm"]["target"])].decode()
    seen = set()
    for _ in range(12):
        found = {key: value for key, _, value in seed_steps(raw["vm"], data, source)}
        seen.add(json.dumps(found, sort_keys=True))
    assert len(seen) == 1
    assert json.loads(seen.pop()) == {
        "main/0@0/1": {"ok": "east: sound"},
        "main/0@1/1": {"ok": "west: one loose"},
    }


def test_an_upgraded_survey_run_keeps_its_half_done_import(tmp_path: Path) -> None:
    root = survey(tmp_path)
    planned = prosec(root, "upgrade", "--dry-run", "--json")
    assert planned.returncode == 0, planned.stderr
    details = {c["to"]: c["detail"] for c in json.loads(planned.stdout)["changes"]}
    assert details[f"runs/{RUN}"].startswith(
        "interrupted run of survey.prose: 1 finished step(s) journaled "
        "(and 1 in 1 half-done import(s))"
    )
    assert prosec(root, "upgrade").returncode == 0
    nested = root / "runs" / RUN / "imports/briefer--briefing"
    assert journal(nested / "vm/journal.jsonl") == {"main/3|2>main/0": {"ok": OUTLINE}}
    resumed = prosec(root, "resume", RUN, "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert performed(root) == ["main/3|0#inspect/0", "main/3|2>main/1", "main/4"]


PATROL = """# Night patrol (a legacy .prose program, written for prosec's tests)

block patrol(round):
  let log = session "Walk patrol round {round}"

loop until **the night is over** (max: 3):
  do patrol("night")
"""
PATROL_STATE = """# Execution State

run: 20260119-220000-p4tr0l
program: patrol.prose
started: 2026-01-19T22:00:00Z
updated: 2026-01-20T01:10:00Z

## Execution Trace

```prose
loop until **the night is over** (max: 3):   # <-- EXECUTING
  do patrol("night")                         # <-- EXECUTING
```

## Active Constructs

### Loop (lines 1-2)

- status: executing
- iteration: 2/3
- condition: **the night is over**

## Call Stack

| execution_id | block  | depth | status    |
| ------------ | ------ | ----- | --------- |
| 42           | patrol | 1     | executing |
"""


def test_an_invocation_in_a_finished_iteration_is_not_the_running_one(tmp_path: Path) -> None:
    """The trace's `<-- EXECUTING` on a loop body's call speaks of the current iteration:
    the first iteration's invocation (finished) is 41, the current one the call stack's
    42, whose `log` is not written yet."""
    from prosec.compiler.legacy_compile import compile_legacy
    from prosec.runtime.inspection import inspect_run
    from prosec.runtime.vm.legacy_seed import seed_steps

    folder = tmp_path / ".prose/runs/20260119-220000-p4tr0l"
    (folder / "bindings").mkdir(parents=True)
    (folder / "program.prose").write_text(PATROL)
    (folder / "state.md").write_text(PATROL_STATE)
    (folder / "bindings/log__41.md").write_text(
        "# log\n\nkind: let\nexecution_id: 41\n\n---\n\nRound one: all quiet.\n"
    )
    raw, compiled, _ = compile_legacy(tmp_path, folder)
    source = compiled[str(raw["vm"]["target"])].decode()
    found = {k: v for k, _, v in seed_steps(raw["vm"], inspect_run(folder), source)}
    assert found == {
        "main/1@0/0#patrol/0": {"ok": "Round one: all quiet."},
        "main/1@0?": {"ok": False},  # the night was not over: the loop went on
    }


def test_a_state_md_naming_many_ids_is_bounded_work() -> None:
    """Untrusted input: an index naming 20,000 execution ids keeps the 4,096 smallest,
    read once for all probes."""
    from prosec.runtime.vm.legacy_trace import IDS, ExecutionIds

    run = {"index": {"bindings": [{"execution_id": n} for n in range(20_000, 0, -1)]}}
    ids = ExecutionIds(run, {})
    assert len(ids.records) == IDS and max(ids.records) == IDS
    probe = ids.fresh()
    assert probe.records is ids.records and probe.given == {}
    found = probe.assign("main/0#b", "b", depth=1, parent=None, finished=None, args={})
    assert found == 1 and ids.given == {}


def test_a_resumed_custom_scope_agent_keeps_its_memory_folder(tmp_path: Path) -> None:
    """seed 000's custom scope on resume: the agent's memory is in its folder of the
    project (`persist: "harbour/logs"`), which is where the VM keeps it too, so the
    resumed session continues there (segment numbers past the legacy ones)."""
    root = survey(tmp_path)
    folder = root / ".prose/runs" / RUN
    program = folder / "program.prose"
    program.write_text(program.read_text().replace("persist: true", 'persist: "harbour/logs"'))
    logs = root / "harbour" / "logs"
    logs.parent.mkdir()
    shutil.move(folder / "agents" / "inspector", logs)
    kept = (logs / "memory.md").read_text()
    result = prosec(root, "resume", RUN, "--json")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in logs.iterdir()) == [
        "inspector-1000.md",
        "inspector-1001.md",  # north's session, the one resumed
        "inspector-999.md",
        "memory.md",
    ]
    assert (logs / "memory.md").read_text() == kept
    assert not (root / "runs" / RUN / "agents" / "inspector").exists()


def test_a_resume_whose_custom_folder_leaves_the_project_is_refused(tmp_path: Path) -> None:
    root = survey(tmp_path)
    program = root / ".prose/runs" / RUN / "program.prose"
    program.write_text(program.read_text().replace("persist: true", 'persist: "../elsewhere"'))
    result = prosec(root, "resume", RUN)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "agent inspector: `persist: '../elsewhere'` must not leave the project" in result.stderr
    assert not (tmp_path / "elsewhere").exists()
