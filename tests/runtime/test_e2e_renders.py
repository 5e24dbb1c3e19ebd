"""End to end: python-callable, agent, replay and ingress renders."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .project import Project, intent


def test_python_callable_render(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", intent({"a": {}}, []))
    (project.root / "myrenders.py").write_text(
        "import json\n"
        "def render(request):\n"
        "    (request.output / 'out.json').write_text(json.dumps({'node': request.node}))\n"
        "    return {'model': 'py', 'tokens': {'fresh': 3, 'reused': 1}}\n"
    )
    result = project.prosec("run", ".", "--json", "--render", "a=python:myrenders:render")
    assert result.returncode == 0, result.stderr
    receipt = project.ledger("a")[-1]
    assert receipt["cost"] == {
        "model": "py",
        "provider": "python",
        "surprise_cause": "input",
        "tokens": {"fresh": 3, "reused": 1},
    }
    published = project.root / "state/world-model/a/published/out.json"
    assert json.loads(published.read_text()) == {"node": "a"}
    bad = project.prosec("run", ".", "--render", "a=python:nosuchmodule:f")
    assert bad.returncode == 2 and "cannot import" in bad.stderr


def test_agent_render_gets_a_prompt_from_contract_inputs_and_output(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", intent({"a": {}, "b": {}}, [("b", "a", "@atomic")]))
    (project.root / "src/b.prose.md").write_text("---\nname: b\n---\n\n## Maintains\n\nA digest.\n")
    (project.root / "agent.py").write_text(
        "import json, os, sys, pathlib\n"
        "prompt = sys.stdin.read()\n"
        "out = pathlib.Path(os.environ['PROSEC_OUTPUT'])\n"
        "(out / 'digest.json').write_text(json.dumps({'chars': len(prompt)}))\n"
    )
    toml = (project.root / "prose.toml").read_text() + (
        f'\n[render.b]\nkind = "agent"\ncommand = ["{sys.executable}", "agent.py"]\n'
        'model = "test-model"\n'
    )
    (project.root / "prose.toml").write_text(toml)
    summary = project.run()
    assert summary["rendered"] == ["a", "b"], summary
    run = project.run_dir(summary["run_id"])
    prompt = (run / "workspace/b/__prompt.md").read_text()
    assert "A digest." in prompt
    assert str(run / "world-model/a") in prompt and str(run / "staging/b") in prompt
    assert project.ledger("b")[-1]["cost"]["model"] == "test-model"


def test_replay_render_and_recorded_signals(tmp_path: Path) -> None:
    validator = {"mode": "render-attested", "attested": [{"id": "ok", "text": "fine"}]}
    project = Project.create(tmp_path / "p", intent({"a": {"validator": validator}}, []))
    rec = project.root / "recordings/a"
    (rec / "published").mkdir(parents=True)
    (rec / "published/facts.yaml").write_text("x: 1\n")
    (rec / "__attest.json").write_text('{"attested": ["ok"]}')
    result = project.prosec("run", ".", "--json", "--render", "*=replay:recordings")
    assert result.returncode == 0, result.stderr
    assert (project.root / "state/world-model/a/published/published/facts.yaml").exists()
    assert project.ledger("a")[-1]["cost"]["provider"] == "replay"


def test_ingress_render_publishes_trigger_data(tmp_path: Path) -> None:
    doc = intent({"g": {"wake_source": "external", "render": {"kind": "ingress"}}}, [], ["g"])
    project = Project.create(tmp_path / "p", doc)
    result = project.prosec("trigger", "g", "--data", '{"b": 1, "a": [2]}')
    assert result.returncode == 0, result.stderr
    published = project.root / "state/world-model/g/published"
    # an object of plain keys: one file per key, so the truth is the payload itself
    assert (published / "a.json").read_bytes() == b"[2]"
    assert (published / "b.json").read_bytes() == b"1"
    assert not (published / "data.json").exists()
    result = project.prosec("trigger", "g", "--data", '["x", {"y": 1}]')
    assert result.returncode == 0, result.stderr
    # anything else is published whole as data.json
    assert (published / "data.json").read_bytes() == b'["x",{"y":1}]'
    assert not (published / "a.json").exists()
    assert project.prosec("trigger", "g", "--data", "{not json").returncode == 2


def test_render_timeout(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", intent({"a": {}}, []))
    project.world("a", {"_control": {"sleep": 30}})
    result = project.prosec("run", ".", "--json", "--timeout", "0.5")
    assert result.returncode == 1
    assert json.loads(result.stdout)["failed"][0]["error"] == "timeout"
