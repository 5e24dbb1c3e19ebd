"""`prosec run prog.prose`: a legacy program (seed 000) runs on the VM as its Contract
Markdown form, compiled in memory, and writes a current-layout run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from ...conftest import REPO
from ..project import PROSEC
from .support import FAKE_AGENT

LEGACY = REPO / "tests" / "data" / "legacy"
SUMMARIZE = """---
name: summarize
kind: function
---

# Summarize

### Parameters

- `text`: the text

### Returns

- `summary`: a short summary
"""


def legacy_project(tmp: Path, table: dict[str, Any] | None = None) -> Path:
    """A scratch project with the tides program and lamp-check, the fake agent as
    renders, and std/summarize in deps/ (the program `use`s it)."""
    root = tmp / "harbour"
    root.mkdir()
    shutil.copy(LEGACY / "tides" / "tides.prose", root)
    shutil.copy(REPO / "corpus/invalid/legacy_program/lamp-check.prose", root)
    deps = root / "deps/github.com/openprose/prose/packages/std"
    deps.mkdir(parents=True)
    (deps / "summarize.prose.md").write_text(SUMMARIZE)
    (root / "table.json").write_text(json.dumps(table or {}))
    command = json.dumps([sys.executable, str(FAKE_AGENT), "table.json", "agent.log"])
    (root / "prose.toml").write_text(f'[render.default]\nkind = "agent"\ncommand = {command}\n')
    return root


def prosec(root: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [str(PROSEC), *args],
        cwd=root,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


def steps(root: Path) -> list[str]:
    log = root / "agent.log"
    return (
        sorted(line.split(" ")[2] for line in log.read_text().splitlines()) if log.exists() else []
    )


def test_a_legacy_program_runs_with_its_inputs(tmp_path: Path) -> None:
    root = legacy_project(tmp_path)
    result = prosec(root, "run", "lamp-check.prose", "--json", "--keeper", "Ada")
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["ok"] and outcome["result"].startswith(
        "session lamp-check: Say whether the lamp burned all night"
    )
    assert "Read the lamp log for Ada" in outcome["result"]  # the input reached the session
    run = Path(outcome["path"])
    info = json.loads((run / "run.json").read_text())
    assert (info["kind"], info["legacy"], info["inputs"]) == (
        "vm",
        "lamp-check.prose",
        {"keeper": "Ada"},
    )
    assert (run / "sources/lamp-check.prose").read_bytes() == (
        root / "lamp-check.prose"
    ).read_bytes()
    form = (run / "root.prose.md").read_text()
    assert form == (run / "sources/lamp-check.prose.md").read_text()
    assert form.startswith("---\nname: lamp-check\nkind: function\n---\n")
    assert "- `keeper`: Who keeps the light tonight" in form and "return report" in form
    assert json.loads((run / "vm/bindings.json").read_text())["log"].startswith("session")
    assert not (root / "lamp-check.prose.md").exists()  # compiled in memory only
    again = prosec(root, "run", "lamp-check.prose", "--json", "--", "keeper:", "Bo")
    assert again.returncode == 0 and "lamp log for Bo" in json.loads(again.stdout)["result"]


def test_a_missing_legacy_input_is_refused_with_its_description(tmp_path: Path) -> None:
    root = legacy_project(tmp_path)
    result = prosec(root, "run", "lamp-check.prose")
    assert result.returncode == 2
    assert "lamp-check.prose: missing required input" in result.stderr
    assert "keeper: Who keeps the light tonight" in result.stderr
    unknown = prosec(root, "run", "lamp-check.prose", "--keeper", "A", "--lamp", "b")
    assert unknown.returncode == 2 and "unknown input 'lamp'" in unknown.stderr


def test_every_construct_of_the_tides_program_runs(tmp_path: Path) -> None:
    table = {"answers": {"the berth plan is settled": [False, True]}}
    root = legacy_project(tmp_path, table)
    result = prosec(root, "run", "tides.prose", "--json", "--station", "Gauge 7")
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["result"].startswith("session tides: Write the notice to mariners")
    bindings = json.loads((Path(outcome["path"]) / "vm/bindings.json").read_text())
    assert {"readings", "high", "low", "plan", "station"} <= set(bindings)
    assert "Gauge 7" in bindings["readings"]
    # the agent, parallel branches, the recursive block, the bounded loop, resume:
    assert steps(root) == sorted(
        [
            "main/3",
            "main/4",
            "main/5|0",
            "main/5|1",
            "main/7#split/0",
            "main/7#split/1?0",
            "main/8@0/0",
            "main/8@0?",
            "main/8@1/0",
            "main/8@1?",
            "main/9",
            "main/10",
        ]
    )
    assert "resume harbormaster main/9 opus" in (root / "agent.log").read_text()


def test_a_broken_legacy_program_is_reported_not_run(tmp_path: Path) -> None:
    root = legacy_project(tmp_path)
    (root / "bad.prose").write_text('input x: "a"\n\nlet y = session "unclosed\n')
    result = prosec(root, "run", "bad.prose", "--x", "1")
    assert result.returncode == 1 and "does not compile" in result.stderr
    assert "prosescript_syntax" in result.stdout and not (root / "runs").exists()


KEEPER = """# Almanac keeper (a legacy .prose program, written for prosec's tests)

agent almanac:
  persist: project
  prompt: "You keep the harbour almanac"

agent pilot:
  persist: user
  prompt: "You bring ships in"

let entry = session: almanac
  prompt: "Note today's tides"

output advice = session: pilot
  prompt: "Advise on {entry}"
"""


def test_legacy_memory_the_run_does_not_read_is_named(tmp_path: Path) -> None:
    """seed 000 keeps `persist: project` memory in `.prose/agents/` and `persist: user`
    memory in `~/.prose/agents/`; the VM reads `state/agents/` and the user root's, so a
    run of the legacy program says which legacy memory it starts without, and how to
    move it (nothing is moved by a run)."""
    root = legacy_project(tmp_path)
    home = tmp_path / "home"
    shutil.copytree(LEGACY / "home", home)
    shutil.copytree(LEGACY / "tides/.prose/agents", root / ".prose/agents")
    (root / "keeper.prose").write_text(KEEPER)
    env = {"HOME": str(home)}
    result = prosec(root, "run", "keeper.prose", "--json", env=env)
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if line.startswith("prosec: note:")]
    assert notes == [
        f"prosec: note: agent almanac (persist: project) starts without its legacy memory "
        f"in {root / '.prose/agents/almanac'}: the run keeps it in "
        f"{root / 'state/agents/almanac'}; `prosec upgrade` moves it there",
        f"prosec: note: agent pilot (persist: user) starts without its legacy memory in "
        f"{home / '.prose/agents/pilot'}: the run keeps it in "
        f"{home / '.agents/prose/state/agents/pilot'}; `prosec upgrade "
        f"{home / '.prose'}` moves it there",
    ]
    assert (root / ".prose/agents/almanac/memory.md").is_file()  # left where it was
    # the run began the current-layout memory: upgrade moves nothing over it
    planned = json.loads(prosec(root, "upgrade", "--dry-run", "--json", env=env).stdout)
    errors = {e["path"]: e["error"] for e in planned["errors"]}
    assert "merge them by hand" in errors[".prose/agents/almanac"]
    assert "merge them by hand" in errors[str(home / ".prose/agents/pilot")]


def test_upgraded_first_the_memory_carries_on(tmp_path: Path) -> None:
    root = legacy_project(tmp_path)
    home = tmp_path / "home"
    shutil.copytree(LEGACY / "home", home)
    shutil.copytree(LEGACY / "tides/.prose/agents", root / ".prose/agents")
    (root / "keeper.prose").write_text(KEEPER)
    env = {"HOME": str(home)}
    assert prosec(root, "upgrade", env=env).returncode == 0  # no PATH: the user scope too
    result = prosec(root, "run", "keeper.prose.md", "--json", env=env)
    assert result.returncode == 0, result.stderr
    assert "legacy memory" not in result.stderr
    almanac = root / "state/agents/almanac"
    assert sorted(p.name for p in almanac.iterdir()) == [
        "almanac-001.md",
        "almanac-002.md",  # this run's session, after the legacy one
        "memory.md",
    ]
