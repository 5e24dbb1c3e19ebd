"""End to end: caller inputs, run-typed inputs, ticks and due cadences."""

from __future__ import annotations

import json
from pathlib import Path

from .project import Project, intent


def test_caller_inputs_are_bound_and_fingerprinted(tmp_path: Path) -> None:
    doc = intent({"q": {"caller_inputs": [{"name": "question"}]}, "r": {}}, [("r", "q", "@atomic")])
    project = Project.create(tmp_path / "p", doc)
    summary = project.run("--input", "question=What changed?")
    assert summary["rendered"] == ["q", "r"]
    run = project.run_dir(summary["run_id"])
    binding = (run / "world-model/caller/question.md").read_text()
    assert binding == ("# question\n\nbinding: input\nsource: caller\n\n---\n\nWhat changed?\n")
    assert "1→ [input] question ✓" in project.log(summary["run_id"])
    assert project.published("q")["caller"]["question"] == binding
    project.reset_renders()
    assert project.run("--input", "question=What changed?")["rendered"] == []
    assert project.run()["rendered"] == []  # the binding persists across runs
    assert project.run("--input", "question=Anything new?")["rendered"] == ["q", "r"]


def test_unknown_caller_input_is_a_usage_error(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", intent({"a": {}}, []))
    result = project.prosec("run", ".", "--input", "nope=1")
    assert result.returncode == 2
    assert "no node declares it" in result.stderr and "Traceback" not in result.stderr


def test_run_typed_inputs_and_the_stale_run_warning(tmp_path: Path) -> None:
    nodes = {
        "a": {},
        "inspector": {"caller_inputs": [{"name": "subject", "type": "run"}]},
        "cohort": {"caller_inputs": [{"name": "runs", "type": "run[]"}]},
    }
    project = Project.create(tmp_path / "p", intent(nodes, []))
    result = project.prosec("run", ".", "--input", "subject=")
    assert result.returncode == 2 and "run reference" in result.stderr
    upstream_id = json.loads(project.prosec("run", ".", "--json").stdout)["run_id"]
    summary = project.run(
        "--input", f"subject={upstream_id}", "--input", f"runs={upstream_id},{upstream_id}"
    )
    run = project.run_dir(summary["run_id"])
    binding = (run / "world-model/caller/subject.md").read_text()
    assert "type: run\n" in binding
    assert f"run: {upstream_id}\n" in binding
    assert f"path: {project.root / 'runs' / upstream_id}\n" in binding
    assert "status: complete" in binding
    assert "type: run[]" in (run / "world-model/caller/runs.md").read_text()
    assert f"upstream: [{upstream_id}]" in project.log(summary["run_id"])
    # change a contract: binding the old run now warns (informational, not blocking)
    nodes["a"]["v"] = 2
    project.set_intent(intent(nodes, []))
    stale = project.prosec("run", ".", "--input", f"subject={upstream_id}")
    assert stale.returncode == 0
    assert f"Stale run: {upstream_id}" in stale.stderr


def test_run_references_cannot_escape(tmp_path: Path) -> None:
    nodes = {"inspector": {"caller_inputs": [{"name": "subject", "type": "run"}]}}
    project = Project.create(tmp_path / "p", intent(nodes, []))
    outside = tmp_path / "20260101-000000-aaaaaa"
    outside.mkdir()
    (outside / "compiled-intent.json").write_text("{}")
    for ref in ("../../etc", str(outside), "runs/../../20260101-000000-aaaaaa"):
        result = project.prosec("run", ".", "--input", f"subject={ref}")
        assert result.returncode == 2, ref
        assert "Traceback" not in result.stderr
    (project.root / "runs").mkdir(exist_ok=True)
    (project.root / "runs/20260101-000000-bbbbbb").symlink_to(outside)
    result = project.prosec("run", ".", "--input", "subject=20260101-000000-bbbbbb")
    assert result.returncode == 2 and "runs/ folder" in result.stderr


def test_tick_renders_a_self_driven_node(tmp_path: Path) -> None:
    doc = intent(
        {"clock": {"wake_source": "self", "cadence": "PT1H"}, "b": {}}, [("b", "clock", "@atomic")]
    )
    project = Project.create(tmp_path / "p", doc)
    project.run()
    project.reset_renders()
    project.world("clock", {"t": 2})
    result = project.prosec("tick", "clock", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["rendered"] == ["clock", "b"]
    assert project.ledger("clock")[-1]["wake"] == {"refs": [], "source": "self"}
    assert project.prosec("tick", "nope").returncode == 2


def test_due_cadences(tmp_path: Path) -> None:
    doc = intent({"hourly": {"wake_source": "self", "cadence": "PT1H"}, "daily": {}}, [])
    project = Project.create(tmp_path / "p", doc)
    config = (project.root / "prose.toml").read_text() + '\n[cadence]\ndaily = "P1D"\n'
    (project.root / "prose.toml").write_text(config)
    project.run()  # cold start renders both; their clocks start
    project.reset_renders()
    assert project.run("--due")["rendered"] == []  # nothing due yet
    clock = project.root / "state/kv/clock.hourly.json"
    clock.write_text(json.dumps({"value": {"last_render": "2000-01-01T00:00:00+00:00"}}))
    project.world("hourly", {"n": 2})
    summary = project.run("--due")
    assert summary["rendered"] == ["hourly"]
    assert project.ledger("hourly")[-1]["wake"]["source"] == "self"
    bad = project.root / "prose.toml"
    bad.write_text(bad.read_text().replace('"P1D"', '"daily"'))
    result = project.prosec("run", ".", "--due")
    assert result.returncode == 2 and "ISO 8601" in result.stderr
