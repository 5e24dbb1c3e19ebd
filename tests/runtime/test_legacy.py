"""Legacy `.prose/` runs (seed 000's file-system state), read completely by `prosec
inspect`: the fixture under tests/data/legacy/ (written for prosec) has every file and
every trace marker of the layout: header, annotated execution trace, active constructs,
index, call stack, root and scoped bindings, anonymous bindings, agent memory and
segments in execution, project and user scope, and imports nested two deep."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .project import Project, intent

DATA = Path(__file__).resolve().parents[1] / "data" / "legacy"
PROSEC = Path(sys.executable).parent / "prosec"
CUT = "20260115-143052-a7b3c9"
DONE = "20260114-091500-k2m4p6"


@pytest.fixture
def tides(tmp_path: Path) -> Path:
    shutil.copytree(DATA, tmp_path / "legacy", symlinks=False)
    return tmp_path / "legacy"


def prosec(where: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    return subprocess.run(
        [str(PROSEC), *args], cwd=where, env=env, capture_output=True, text=True, timeout=60
    )


def inspect_json(tides: Path, ref: str) -> dict[str, Any]:
    result = prosec(tides / "tides", tides / "home", "inspect", ref, "--json")
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_every_part_of_an_interrupted_legacy_run_is_read(tides: Path) -> None:
    data = inspect_json(tides, CUT)
    assert data["legacy"] and data["run_id"] == CUT and data["status"] == "interrupted"
    assert (data["program"], data["started"], data["updated"]) == (
        "tides.prose",
        "2026-01-15T14:30:52Z",
        "2026-01-15T14:41:07Z",
    )
    assert data["program_source"] is True and data["problems"] == []
    marks = {
        e["line"]: {k: v for k, v in e.items() if k not in ("line", "code")} for e in data["trace"]
    }
    assert marks[1] == {"status": "written", "wrote": "bindings/station.md"}
    assert marks[12] == {"status": "written", "wrote": "imports/std--summarize/"}
    assert marks[20] == {"status": "complete", "wrote": "bindings/high.md"}
    assert marks[21] == {"status": "retrying", "attempt": 2, "of": 3}
    assert marks[23] == {"status": "executing"}
    assert marks[25] == {"status": "not yet entered"}
    assert marks[29] == {"status": "next"}
    assert marks[19] == {} and data["position"] == [21, 23]
    assert [e["code"] for e in data["trace"] if e["line"] == 23] == ["do split(readings)"]
    assert data["constructs"] == [
        {"kind": "parallel", "lines": [19, 21], "items": {"high": "complete", "low": "retrying"}},
        {
            "kind": "loop",
            "lines": [25, 27],
            "items": {
                "status": "not yet entered",
                "iteration": "0/3",
                "condition": "**the berth plan is settled**",
            },
        },
    ]
    assert [(r["name"], r["path"], r["execution_id"]) for r in data["index"]["bindings"]][-2:] == [
        ("result", "bindings/result__41.md", 41),
        ("result", "bindings/result__42.md", 42),
    ]
    assert [(a["name"], a["scope"]) for a in data["index"]["agents"]] == [
        ("harbormaster", "execution"),
        ("almanac", "project"),
        ("pilot", "user"),
    ]
    assert data["call_stack"] == [
        {"execution_id": 42, "block": "split", "depth": 2, "status": "executing"},
        {"execution_id": 41, "block": "split", "depth": 1, "status": "waiting"},
    ]
    bindings = {(b["name"], b["execution_id"]): b for b in data["bindings"]}
    assert sorted(bindings) == sorted(
        [
            ("anon_001", None),
            ("high", None),
            ("readings", None),
            ("result", 41),
            ("result", 42),
            ("station", None),
        ]
    )
    assert bindings[("station", None)]["kind"] == "input"
    assert bindings[("station", None)]["value"] == "Gauge 7, north breakwater"
    assert bindings[("result", 42)]["source"] == 'let result = session "Split {chunk} into watches"'
    assert bindings[("anon_001", None)]["source"] == 'session "Check the gauge calibration"'
    agents = {a["name"]: a for a in data["agents"]}
    assert {name: a["scope"] for name, a in agents.items()} == {
        "harbormaster": "execution",
        "almanac": "project",
        "pilot": "user",
    }
    assert "berth 1 kept clear" in agents["harbormaster"]["memory"]
    assert [
        (s["number"], s["timestamp"], s["prompt"]) for s in agents["harbormaster"]["segments"]
    ] == [
        (1, "2026-01-15T14:33:10Z", "Review the overnight readings"),
        (2, "2026-01-15T14:38:44Z", "Plan tonight's berths"),
    ]
    assert agents["harbormaster"]["segments"][1]["summary"].startswith("- Decided: berth 2")
    assert [s["prompt"] for s in agents["pilot"]["segments"]] == ["Read the notice draft"]
    (summarize,) = data["imports"]
    assert (summarize["handle"], summarize["slug"], summarize["status"]) == (
        "std",
        "summarize",
        "complete",
    )
    assert [b["name"] for b in summarize["bindings"]] == ["summary", "text"]
    (tokenize,) = summarize["imports"]
    assert tokenize["path"] == "imports/std--tokenize" and tokenize["program"] == "std/tokenize"
    assert [b["value"] for b in tokenize["bindings"] if b["name"] == "tokens"] == [
        "the, readings, of, gauge, 7"
    ]
    assert tokenize["agents"] == []  # project and user agents belong to the top run


def test_legacy_runs_are_found_by_bare_id_and_latest(tides: Path) -> None:
    assert inspect_json(tides, DONE)["status"] == "complete"
    assert inspect_json(tides, "latest")["run_id"] == CUT  # the newest run is a legacy one
    path = str(tides / "tides/.prose/runs" / DONE)
    assert inspect_json(tides, path)["run_id"] == DONE
    unknown = prosec(tides / "tides", tides / "home", "inspect", "20260101-000000-zzzzzz")
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr


def test_latest_is_a_current_run_when_it_is_newer(tides: Path, tmp_path: Path) -> None:
    root = tides / "tides"
    shutil.rmtree(root / "dist", ignore_errors=True)
    fresh = Project.create(tmp_path / "fresh", intent({"a": {}}, []))
    for item in ("dist", "renders", "world", "src", "prose.toml"):
        source = fresh.root / item
        (shutil.copytree if source.is_dir() else shutil.copy)(source, root / item)
    current = Project(root).run()
    assert inspect_json(tides, "latest")["run_id"] == current["run_id"]
    assert inspect_json(tides, CUT)["legacy"] is True


def test_the_text_report_names_every_part(tides: Path) -> None:
    result = prosec(tides / "tides", tides / "home", "inspect", CUT)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    for expected in (
        f"run {CUT}: legacy .prose/ run, interrupted",
        "program: tides.prose",
        "21   low = session",
        "<-- RETRYING (attempt 2/3)",
        "23 do split(readings)  # <-- EXECUTING",
        "[not yet entered]",
        "active parallel (lines 19-21): high: complete, low: retrying",
        "call stack: execution 42 split depth 2 executing",
        "binding result (let, execution 41): bindings/result__41.md",
        "agent almanac (project): memory, 1 segment",
        "agent pilot (user): memory, 1 segment",
        "import std--summarize (imports/std--summarize):",
        "  import std--tokenize (imports/std--tokenize):",
    ):
        assert expected in text, expected


def test_damaged_legacy_files_are_reported_not_crashed_on(tides: Path) -> None:
    run = tides / "tides/.prose/runs" / CUT
    (run / "bindings/high.md").unlink()
    (run / "bindings/readings.md").write_bytes(b"\xff\xfe\x00 not utf-8 \x80")
    (run / "state.md").write_text((run / "state.md").read_text().replace("## Call Stack", "##"))
    data = inspect_json(tides, CUT)
    assert any("bindings/high.md, which is missing" in p for p in data["problems"])
    assert {b["name"] for b in data["bindings"]} >= {"readings", "station"}
    (run / "state.md").write_bytes(os.urandom(2048))
    garbage = prosec(tides / "tides", tides / "home", "inspect", CUT, "--json")
    assert garbage.returncode == 0 and "Traceback" not in garbage.stderr


def test_the_env_file_is_named_never_shown(tides: Path) -> None:
    data = inspect_json(tides, CUT)
    assert data["env"] == ["OPENPROSE_TELEMETRY", "SESSION_ID", "USER_ID"]
    text = prosec(tides / "tides", tides / "home", "inspect", CUT).stdout
    assert ".prose/.env sets: OPENPROSE_TELEMETRY, SESSION_ID, USER_ID (values not shown)" in text
    for secret in ("user-tides01", "sess-1704326400000-tides7", "disabled"):
        assert secret not in text and secret not in json.dumps(data)
