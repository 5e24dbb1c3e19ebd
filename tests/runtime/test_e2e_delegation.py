"""End to end: a render yields to a runtime delegate and is resumed with its response.

lighthouse-watch's keeper (whose `### Shape` lists the delegate `tide-almanac`) runs the
fake agent CLI; the delegate is bound to the fake agent too. The vm.log markers are
seed 001's: `⇒` when the render yields, the delegate's `✓`, `⟳ (resumed)`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import CORPUS
from .project import PROSEC

FAKE_AGENT = Path(__file__).with_name("renders") / "fake_agent.py"
AGENT = f'kind = "agent"\ncommand = ["{sys.executable}", "fake_agent.py"]\n'
KEEPER = "lighthouse-keeper"
WS = f"workspace/{KEEPER}/__delegate/tide-almanac"


def prosec(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENPROSE_", "PROSEC_CRASH"))}
    env["PROSEC_CACHE_DIR"] = str(root.parent / "cache")
    return subprocess.run(
        [str(PROSEC), *args], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )


def make(tmp_path: Path, delegate_binding: str | None = AGENT) -> Path:
    root = tmp_path / "lighthouse-watch"
    shutil.copytree(CORPUS / "lighthouse-watch", root)
    shutil.copy(FAKE_AGENT, root / "fake_agent.py")
    toml = f'[render.lamp-reports]\nkind = "ingress"\n\n[render.{KEEPER}]\n{AGENT}'
    if delegate_binding is not None:
        toml += f"\n[render.tide-almanac]\n{delegate_binding}"
    (root / "prose.toml").write_text(toml)
    for command in ("build", "activate"):
        result = prosec(root, command)
        assert result.returncode == 0, result.stderr
    return root


def delegating(root: Path, *calls: tuple[str, str, str]) -> None:
    (root / "agent").mkdir(exist_ok=True)
    control = {"delegate": [{"name": n, "id": i, "request": r} for n, i, r in calls]}
    (root / "agent" / f"{KEEPER}.json").write_text(json.dumps(control))


def trigger(root: Path) -> tuple[int, Path]:
    data = json.dumps({"reports": [{"light": "skerry", "status": "dark"}]})
    result = prosec(root, "trigger", "lamp-reports", "--data", data, "--json")
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, root / "runs" / json.loads(result.stdout)["run_id"]


def events(run: Path) -> list[str]:
    """vm.log.md's event markers (the header and the timestamped end line left out)."""
    lines = (run / "vm.log.md").read_text().splitlines()
    return [line for line in lines if "→ " in line]


def test_a_render_yields_to_its_delegate_and_resumes_with_the_response(tmp_path: Path) -> None:
    root = make(tmp_path)
    delegating(root, ("tide-almanac", "req-001", "next high water at the skerry"))
    code, run = trigger(root)
    assert code == 0
    assert events(run) == [
        "1→ lamp-reports ✓ rendered",
        f"2→ {KEEPER} ⇒ tide-almanac (delegate: req-001)",
        "2→ tide-almanac ✓",
        f"2→ {KEEPER} ⟳ (resumed)",
        f"2→ {KEEPER} ✓ rendered",
    ]
    assert (run / WS / "req-001.md").read_text() == "next high water at the skerry\n"
    response = "answer to: next high water at the skerry\n"
    assert (run / WS / "req-001-response.md").read_text() == response
    published = root / f"state/world-model/{KEEPER}/published"
    assert json.loads((published / "answers.json").read_text()) == {
        "tide-almanac/req-001": response
    }
    log = (root / "agent.log").read_text().splitlines()
    assert log == [
        f"{KEEPER} yield tide-almanac/req-001",
        f"tide-almanac delegate-of={KEEPER} id=req-001",
        f"{KEEPER} model=harbour-small scope=project segment={KEEPER}-001.md "
        "memory-in-prompt=yes resumed",
    ]
    # the resumed render is the same session: one segment; the prompt named the response
    memory = sorted(p.name for p in (root / f"state/agents/{KEEPER}").iterdir())
    assert memory == [f"{KEEPER}-001.md", "memory.md"]
    prompt = (run / f"workspace/{KEEPER}/__prompt.md").read_text()
    assert "Delegation complete: tide-almanac/req-001" in prompt
    assert f"Response: {run / WS / 'req-001-response.md'}" in prompt
    # the delegate ran as an independent session with the request as its input
    session = run / WS / "req-001.session"
    wake = json.loads((session / "__wake.json").read_text())
    assert wake == {
        "source": "delegation",
        "from": KEEPER,
        "id": "req-001",
        "request": str(run / WS / "req-001.md"),
    }
    delegate_prompt = (session / "__prompt.md").read_text()
    assert "You run as the delegate `tide-almanac`" in delegate_prompt
    assert "Tide almanac" in delegate_prompt  # its own contract, as compiled


def test_parallel_delegation_logs_each_delegate_and_one_resume(tmp_path: Path) -> None:
    root = make(tmp_path)
    delegating(
        root,
        ("tide-almanac", "req-002", "high water at the point"),
        ("tide-almanac", "req-001", "high water at the skerry"),
    )
    code, run = trigger(root)
    assert code == 0
    assert events(run)[1:] == [
        f"2→ {KEEPER} ⇒ tide-almanac (delegate: req-001)",
        f"2→ {KEEPER} ⇒ tide-almanac (delegate: req-002)",
        "2→ tide-almanac ✓",
        "2→ tide-almanac ✓",
        f"2→ {KEEPER} ⟳ (resumed)",
        f"2→ {KEEPER} ✓ rendered",
    ]
    answers = json.loads((root / f"state/world-model/{KEEPER}/published/answers.json").read_text())
    assert sorted(answers) == ["tide-almanac/req-001", "tide-almanac/req-002"]


@pytest.mark.parametrize(
    ("calls", "binding", "error", "delegate_marker"),
    [
        ((("weather-desk", "q1", "rain?"),), AGENT, "delegate-undeclared", None),
        ((("tide-almanac", "q1", "tides?"),), None, "delegate-unbound", None),
        (
            (("tide-almanac", "q1", "tides?"),),
            f'kind = "command"\ncommand = ["{sys.executable}", "-c", "raise SystemExit(3)"]\n',
            "delegate-failed",
            "2→ tide-almanac ✗ exit-3",
        ),
    ],
)
def test_a_delegation_that_cannot_be_served_fails_the_render(
    tmp_path: Path,
    calls: tuple[tuple[str, str, str], ...],
    binding: str | None,
    error: str,
    delegate_marker: str | None,
) -> None:
    root = make(tmp_path, binding)
    delegating(root, *calls)
    code, run = trigger(root)
    assert code == 1
    assert events(run)[-1] == f"2→ {KEEPER} ✗ {error}"
    if delegate_marker is not None:
        assert delegate_marker in events(run)
    receipt = json.loads(
        (root / f"state/world-model/{KEEPER}/receipts.jsonl").read_text().splitlines()[-1]
    )
    assert receipt["status"] == "failed"
    assert receipt["semantic_diff"]["error"] == error
    if error == "delegate-undeclared":
        assert "does not list" in receipt["semantic_diff"]["reason"]
        assert "tide-almanac" in receipt["semantic_diff"]["reason"]
    if error == "delegate-unbound":
        assert "[render.tide-almanac]" in receipt["semantic_diff"]["reason"]
