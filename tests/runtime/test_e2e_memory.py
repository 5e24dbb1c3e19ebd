"""End to end: agent memory from `### Runtime` `persist`, and the model an agent is given.

The corpus program lighthouse-watch (an agent with `persist: project` and a `model`) is
built and run through the real CLI with the fake agent CLI (a real subprocess); other
scopes run on hand-written compiled intents.
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
from .project import PROSEC, Project, intent

FAKE_AGENT = Path(__file__).with_name("renders") / "fake_agent.py"
AGENT_TOML = (
    '[render.{node}]\nkind = "agent"\n'
    f'command = ["{sys.executable}", "fake_agent.py", "--prompt-file", "{{{{prompt_file}}}}"]\n'
)


def prosec(
    root: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **(env or {})}
    full.pop("PROSEC_CRASH_AT", None)
    for name in ("OPENPROSE_DEFAULT_MODEL", "OPENPROSE_MAX_PARALLEL"):
        if env is None or name not in env:
            full.pop(name, None)
    return subprocess.run(
        [str(PROSEC), *args], cwd=root, env=full, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def lighthouse(tmp_path: Path) -> Path:
    root = tmp_path / "lighthouse-watch"
    shutil.copytree(CORPUS / "lighthouse-watch", root)
    shutil.copy(FAKE_AGENT, root / "fake_agent.py")
    (root / "prose.toml").write_text(
        '[render.lamp-reports]\nkind = "ingress"\n\n'
        + AGENT_TOML.format(node="lighthouse-keeper")
        + 'model = "binding-model"\n',
        encoding="utf-8",
    )
    env = {"PROSEC_CACHE_DIR": str(tmp_path / "cache"), "OPENPROSE_USER_ROOT": str(tmp_path / "u")}
    for command in (("build",), ("activate",)):
        result = prosec(root, *command, env=env)
        assert result.returncode == 0, result.stderr
    return root


def agent_log(root: Path) -> list[str]:
    return (root / "agent.log").read_text(encoding="utf-8").splitlines()


def trigger(root: Path, reports: list[dict[str, str]]) -> dict[str, object]:
    data = json.dumps({"reports": reports})
    result = prosec(root, "trigger", "lamp-reports", "--data", data, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_project_memory_carries_over_runs_with_one_segment_per_session(lighthouse: Path) -> None:
    first = trigger(lighthouse, [{"light": "skerry", "status": "dark"}])
    assert first["rendered"] == ["lamp-reports", "lighthouse-keeper"]
    memory = lighthouse / "state/agents/lighthouse-keeper"
    assert (memory / "memory.md").read_text().splitlines()[2] == "sessions: 1"
    assert (memory / "lighthouse-keeper-001.md").read_text().startswith("# Segment 001")
    trigger(
        lighthouse, [{"light": "skerry", "status": "dark"}, {"light": "point", "status": "dark"}]
    )
    assert (memory / "memory.md").read_text().splitlines()[2] == "sessions: 2"
    assert sorted(p.name for p in memory.iterdir()) == [
        "lighthouse-keeper-001.md",
        "lighthouse-keeper-002.md",
        "memory.md",
    ]
    # the ### Runtime model wins over the binding's; the prompt names the memory file
    assert agent_log(lighthouse)[-1] == (
        "lighthouse-keeper model=harbour-small scope=project "
        "segment=lighthouse-keeper-002.md memory-in-prompt=yes"
    )
    keeper = lighthouse / "state/world-model/lighthouse-keeper"
    receipts = [json.loads(line) for line in (keeper / "receipts.jsonl").read_text().splitlines()]
    assert [r["cost"]["model"] for r in receipts] == ["harbour-small", "harbour-small"]
    assert json.loads((keeper / "published/watches.json").read_text()) == 2
    # project memory is not the run's: the run's agents/ folder stays empty
    assert not any((lighthouse / "runs" / str(first["run_id"]) / "agents").iterdir())


def test_the_runtime_writes_the_segment_an_agent_left_out(lighthouse: Path) -> None:
    (lighthouse / "agent").mkdir()
    (lighthouse / "agent/lighthouse-keeper.json").write_text('{"no_segment": true}')
    run = trigger(lighthouse, [{"light": "skerry", "status": "lit"}])
    segment = lighthouse / "state/agents/lighthouse-keeper/lighthouse-keeper-001.md"
    assert segment.read_text() == (
        f"# Segment 001\n\nrun: {run['run_id']}\nnode: lighthouse-keeper\noutcome: ok\n\n"
        "The agent wrote no segment record for this session.\n"
    )
    trigger(lighthouse, [{"light": "skerry", "status": "dark"}])
    assert agent_log(lighthouse)[-1].split()[3] == "segment=lighthouse-keeper-002.md"


def test_segments_number_past_999_with_four_digits(lighthouse: Path) -> None:
    memory = lighthouse / "state/agents/lighthouse-keeper"
    memory.mkdir(parents=True)
    (memory / "lighthouse-keeper-999.md").write_text("# Segment 999\n")
    (memory / "lighthouse-keeper-notes.md").write_text("not a segment\n")
    trigger(lighthouse, [{"light": "skerry", "status": "dark"}])
    assert (memory / "lighthouse-keeper-1000.md").is_file()
    assert agent_log(lighthouse)[-1].split()[3] == "segment=lighthouse-keeper-1000.md"


def scoped(tmp_path: Path, runtime: dict[str, str], toml_extra: str = "") -> Project:
    doc = intent({"keeper": {}}, [])
    doc["topology"]["nodes"][0]["runtime"] = runtime
    project = Project.create(tmp_path / "p", doc, AGENT_TOML.format(node="keeper") + toml_extra)
    shutil.copy(FAKE_AGENT, project.root / "fake_agent.py")
    return project


@pytest.mark.parametrize(
    ("runtime", "folder"),
    [
        ({"persist": "true"}, "runs/{run}/agents/keeper"),
        ({"persist": "project"}, "state/agents/keeper"),
        ({"persist": "user"}, "../user/state/agents/keeper"),
        ({"persist": "path", "path": "memory/keeper"}, "memory/keeper"),
    ],
)
def test_each_scope_keeps_memory_in_its_folder(
    tmp_path: Path, runtime: dict[str, str], folder: str
) -> None:
    project = scoped(tmp_path, runtime)
    result = prosec(
        project.root, "run", ".", "--json", env={"OPENPROSE_USER_ROOT": str(tmp_path / "user")}
    )
    assert result.returncode == 0, result.stderr
    run_id = json.loads(result.stdout)["run_id"]
    where = (project.root / folder.format(run=run_id)).resolve()
    assert (where / "memory.md").read_text().splitlines()[2] == "sessions: 1"
    assert (where / "keeper-001.md").is_file()
    scope = runtime["persist"]
    assert agent_log(project.root) == [
        f"keeper model=unspecified scope={scope} segment=keeper-001.md memory-in-prompt=yes"
    ]


def test_run_scoped_memory_starts_afresh_in_each_run(tmp_path: Path) -> None:
    project = scoped(tmp_path, {"persist": "true"})
    for _ in range(2):
        (project.root / "world").mkdir(exist_ok=True)
        assert prosec(project.root, "tick", "keeper").returncode == 0
    log = agent_log(project.root)
    assert [line.split()[3] for line in log] == ["segment=keeper-001.md"] * 2


def test_a_node_without_persist_gets_no_memory(tmp_path: Path) -> None:
    project = scoped(tmp_path, {"model": "opus"})
    assert prosec(project.root, "run", ".").returncode == 0
    assert agent_log(project.root) == ["keeper model=opus scope=- segment=- memory-in-prompt=no"]
    assert not (project.root / "state/agents").exists()
    assert project.ledger("keeper")[-1]["cost"]["model"] == "opus"


def test_a_python_render_gets_its_memory_on_the_request(tmp_path: Path) -> None:
    doc = intent({"keeper": {}}, [])
    doc["topology"]["nodes"][0]["runtime"] = {"persist": "project", "model": "m1"}
    project = Project.create(
        tmp_path / "p", doc, '[render.keeper]\nkind = "python"\ncallable = "mem:render"\n'
    )
    (project.root / "mem.py").write_text(
        "import json\n"
        "def render(request):\n"
        "    m = request.memory\n"
        "    facts = [m.scope, m.memory.name, m.segment.name, m.number, request.model]\n"
        "    (request.output / 'facts.json').write_text(json.dumps(facts))\n"
    )
    assert prosec(project.root, "run", ".").returncode == 0
    published = project.root / "state/world-model/keeper/published/facts.json"
    assert json.loads(published.read_text()) == ["project", "memory.md", "keeper-001.md", 1, "m1"]
    # the render wrote no segment: prosec closed the session's one itself
    assert (
        (project.root / "state/agents/keeper/keeper-001.md")
        .read_text()
        .startswith("# Segment 001\n")
    )


def test_the_in_context_backend_keeps_memory_only_for_the_run(tmp_path: Path) -> None:
    project = scoped(tmp_path, {"persist": "project"})
    result = prosec(project.root, "run", ".", "--backend", "in-context")
    assert result.returncode == 0, result.stderr
    assert agent_log(project.root) == [
        "keeper model=unspecified scope=project segment=keeper-001.md memory-in-prompt=yes"
    ]
    assert not (project.root / "state/agents").exists()  # nothing durable


@pytest.mark.parametrize("blocker", ["folder-is-a-file", "memory-md-is-a-folder"])
def test_an_unusable_memory_folder_fails_the_render_not_prosec(
    tmp_path: Path, blocker: str
) -> None:
    project = scoped(tmp_path, {"persist": "project"})
    folder = project.root / "state/agents/keeper"
    if blocker == "folder-is-a-file":
        folder.parent.mkdir(parents=True)
        folder.write_text("not a folder")
    else:
        (folder / "memory.md").mkdir(parents=True)
    result = prosec(project.root, "run", ".", "--json")
    assert result.returncode == 1, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    receipt = project.ledger("keeper")[-1]
    assert receipt["status"] == "failed"
    assert receipt["semantic_diff"]["error"] == "memory-unavailable"
    assert str(folder) in receipt["semantic_diff"]["reason"]
    assert not (project.root / "agent.log").exists()  # the agent never ran


def test_a_path_folder_linked_out_of_the_project_is_unavailable(tmp_path: Path) -> None:
    """agents.open_memory (every render's, and a VM session's) refuses a path folder that
    resolves outside the project, writing nothing there."""
    from prosec.runtime.agents import MemoryUnavailable, open_memory

    root, outside = tmp_path / "project", tmp_path / "outside"
    (root / "harbour").mkdir(parents=True)
    outside.mkdir()
    (root / "harbour" / "logs").symlink_to(outside)
    with pytest.raises(MemoryUnavailable, match="outside the project"):
        open_memory(
            {"persist": "path", "path": "harbour/logs"}, "pilot", root=root, run_dir=tmp_path
        )
    assert list(outside.iterdir()) == []
    inside = open_memory(
        {"persist": "path", "path": "harbour/books"}, "pilot", root=root, run_dir=tmp_path
    )
    assert inside is not None and inside.directory == root / "harbour" / "books"
    assert inside.memory.read_text() == "# Agent Memory: pilot\n"


def test_the_vm_keeps_a_persist_folder_as_written() -> None:
    from prosec.runtime.vm.memory import memory_runtime, persist_of

    assert [persist_of(v) for v in (True, False, None, "Project", "no")] == [
        "true",
        None,
        None,
        "project",
        None,
    ]
    assert persist_of("Harbour/Logs") == "Harbour/Logs"
    assert memory_runtime("./Harbour//Logs/") == {"persist": "path", "path": "Harbour/Logs"}
