"""Nested imports: a `use`d program called runs under runs/{id}/imports/{handle}--{slug}/
with the run layout, recursively, and resumes where a kill stopped it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .support import VmProject

LAYOUT = ["compiled-intent.json", "root.prose.md", "sources", "workspace", "world-model"]
LAYOUT += ["receipts", "vm.log.md", "vm", "imports", "agents"]


def _events(path: Path) -> list[str]:
    lines = path.read_text().splitlines()
    return lines[:2] + [line for line in lines[2:] if "→ " in line]


def test_a_used_program_runs_in_its_own_nested_run_folder(tmp_path: Path) -> None:
    project = VmProject.create(tmp_path, "vm-imports", "tea-party")
    outcome = project.run("--guests", "4")
    run = project.run_dir(outcome["run_id"])
    brew = run / "imports" / "brew--cup-of-tea"
    boil = brew / "imports" / "boil--kettle"
    for folder in (brew, boil):
        assert all((folder / name).exists() for name in LAYOUT), folder
    assert (brew / "root.prose.md").read_bytes() == (
        project.root / "src/cup-of-tea.prose.md"
    ).read_bytes()
    assert (brew / "world-model/caller/tea.md").read_text().endswith("\n---\n\nassam\n")
    assert project.markers(outcome["run_id"]) == [
        "1→ [input] guests ✓",
        "2→ brew ✓",
        "3→ lay-table ✓",
        "---end",
    ]
    rid = outcome["run_id"]
    assert _events(brew / "vm.log.md") == [
        f"# run:{rid}/brew--cup-of-tea cup-of-tea",
        "root: src/cup-of-tea.prose.md",
        "1→ [input] tea ✓",
        "2→ boil ✓",
        "3→ steep ✓",
    ]
    assert _events(boil / "vm.log.md") == [
        f"# run:{rid}/boil--kettle kettle",
        "root: src/kettle.prose.md",
        "1→ [input] litres ✓",
        "2→ kettle ✓",
    ]
    intent = json.loads((boil / "compiled-intent.json").read_text())
    assert (intent["vm"]["entry"], intent["vm"]["target"]) == ("kettle", "src/kettle.prose.md")
    validated = project.prosec("validate", str(boil / "compiled-intent.json"))
    assert validated.returncode == 0, validated.stderr
    assert outcome["result"] == (
        'lay-table:table({"guests": "4", "pot": "steep:pot({\\"tea\\": \\"assam\\", '
        '\\"water\\": \\"kettle:water({\\\\\\"litres\\\\\\": 1})\\"})"})'
    )


@pytest.mark.parametrize("after", [2, 3, 4, 5])
def test_a_kill_inside_a_nested_run_resumes_without_redoing_a_step(
    tmp_path: Path, after: int
) -> None:
    reference = VmProject.create(tmp_path / "ref", "vm-imports", "tea-party")
    whole = reference.run("--guests", "2")
    project = VmProject.create(tmp_path / "cut", "vm-imports", "tea-party")
    crashed = project.prosec(
        "run", project.entry, "--guests", "2", env={"PROSEC_VM_CRASH_AFTER": str(after)}
    )
    assert crashed.returncode == -9
    run_id = next((project.root / "runs").iterdir()).name
    resumed = project.prosec("resume", run_id, "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["result"] == whole["result"]
    keys = [line.split(" ")[2] for line in project.steps()]
    assert len(keys) == len(set(keys)) == len(reference.steps())


def test_each_call_of_the_same_alias_gets_its_own_nested_run_folder(tmp_path: Path) -> None:
    project = VmProject.create(tmp_path, "vm-imports", "tea-for-two")
    outcome = project.run("--first", "assam", "--second", "sencha")
    run = project.run_dir(outcome["run_id"])
    assert sorted(p.name for p in (run / "imports").iterdir()) == [
        "brew--cup-of-tea",
        "brew--cup-of-tea-002",
    ]
    first, second = run / "imports/brew--cup-of-tea", run / "imports/brew--cup-of-tea-002"
    for folder, tea in ((first, "assam"), (second, "sencha")):
        assert all((folder / name).exists() for name in LAYOUT), folder
        assert (folder / "world-model/caller/tea.md").read_text().endswith(f"\n---\n\n{tea}\n")
        log = (folder / "vm.log.md").read_text().splitlines()
        ends = [line for line in log if line.startswith("---")]
        assert len(ends) == 1 and ends[0].startswith("---end ")  # one call each
        assert (folder / "imports/boil--kettle/vm.log.md").is_file()
    keys = [json.loads((f / "vm/call.json").read_text())["key"] for f in (first, second)]
    assert len(set(keys)) == 2
    assert "sencha" in json.dumps(outcome["result"]) and "assam" in json.dumps(outcome["result"])
    # a kill in the second call's nested run: resume continues that folder, not a third
    cut = VmProject.create(tmp_path / "cut", "vm-imports", "tea-for-two")
    env = {"PROSEC_VM_CRASH_AFTER": "9"}
    crashed = cut.prosec("run", cut.entry, "--first", "assam", "--second", "sencha", env=env)
    assert crashed.returncode == -9
    run_id = next((cut.root / "runs").iterdir()).name
    resumed = cut.prosec("resume", run_id, "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["result"] == outcome["result"]
    assert sorted(p.name for p in (cut.run_dir(run_id) / "imports").iterdir()) == [
        "brew--cup-of-tea",
        "brew--cup-of-tea-002",
    ]
    keys_cut = [line.split(" ")[2] for line in cut.steps()]
    assert len(keys_cut) == len(set(keys_cut)) == len(project.steps())


def _tree(folder: Path, run_id: str) -> dict[str, bytes]:
    """Every file of a run folder but the renders' scratch (a replay runs none), with
    the run id and end times blanked (vm.log.md headers name the run; `---end` lines
    carry a timestamp)."""
    files = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if not path.is_file() or {"workspace", "staging", "receipts"} & set(rel.split("/")):
            continue
        if rel.endswith(("vm/lock", "run.json")):
            continue
        data = path.read_bytes().replace(run_id.encode(), b"RUN")
        if path.name == "vm.log.md":
            data = b"\n".join(
                line.split(b" ")[0] if line.startswith(b"---") else line
                for line in data.splitlines()
            )
        files[rel] = data
    return files


@pytest.mark.parametrize(
    ("entry", "args"),
    [("tea-party", ["--guests", "4"]), ("tea-for-two", ["--first", "assam", "--second", "chai"])],
)
def test_a_replay_rebuilds_the_imports_from_the_recorded_nested_runs(
    tmp_path: Path, entry: str, args: list[str]
) -> None:
    project = VmProject.create(tmp_path, "vm-imports", entry)
    first = project.run(*args)
    steps = project.steps()
    project.table({"fail": ["everything"], "answers": {}})  # a replay asks no render
    second = project.run(*args, "--replay", first["run_id"])
    assert project.steps() == steps and second["result"] == first["result"]
    one, two = project.run_dir(first["run_id"]), project.run_dir(second["run_id"])
    nested = sorted(p.relative_to(one) for p in one.rglob("imports/*") if p.is_dir())
    assert nested == sorted(p.relative_to(two) for p in two.rglob("imports/*") if p.is_dir())
    assert len(nested) == (2 if entry == "tea-party" else 4)
    a, b = _tree(one, first["run_id"]), _tree(two, second["run_id"])
    assert [k for k in a if "imports/" in k and k.endswith("journal.jsonl")]
    assert a == b
