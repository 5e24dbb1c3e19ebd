"""The README's render examples (command, python, agent) run as written, on the newsroom."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from pathlib import Path

import pytest

from ..conftest import CORPUS, REPO, Runner

SECTION = "### Writing a render: `RenderRequest` and `RenderOutcome`"

# An agent-shaped program for the agent example: it reads the prompt prosec wrote and
# writes the front page from the inputs the prompt names, as an agent would.
AGENT = r"""#!/usr/bin/env python3
import json, pathlib, re, sys
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
prompt = pathlib.Path(args["--prompt-file"]).read_text()
paths = dict(re.findall(r"^- `([\w-]+)` facet `[^`]+` @ \S+: (\S+)$", prompt, re.M))
def read(producer, name):
    path = pathlib.Path(paths.get(producer, "")) / name
    return json.loads(path.read_text()) if path.is_file() else []
led = [d["story"] for d in read("breaking-desk", "decisions.json") if d["action"] == "lead"]
features = [s["story"] for s in read("features-desk", "summaries.json")]
pathlib.Path(args["--write-to"], "stories.json").write_text(json.dumps(led + features))
"""


def _examples() -> tuple[list[str], dict[str, str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1].split("\n### ", 1)[0]
    blocks = re.findall(r"```(\w+)\n(.*?)```", section, re.S)
    tables = [body for lang, body in blocks if lang == "toml"]
    files = {}
    for lang, body in blocks:
        first = body.splitlines()[0]
        if lang == "python" and first.startswith("# renders/"):
            files[first.removeprefix("# ")] = body
    return tables, files


def test_the_readme_shows_one_render_of_each_kind() -> None:
    tables, files = _examples()
    kinds = [re.search(r'kind = "(\w+)"', table).group(1) for table in tables]  # type: ignore[union-attr]
    assert kinds == ["command", "python", "agent"]
    assert sorted(files) == ["renders/briefing.py", "renders/features.py"]


@pytest.mark.slow  # a build and two runs through the real CLI, with three render kinds
def test_the_readme_renders_run_on_the_newsroom(
    run_prosec: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROSEC_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "newsroom"
    shutil.copytree(
        CORPUS / "newsroom", root, ignore=shutil.ignore_patterns("dist", "runs", "state")
    )
    tables, files = _examples()
    with (root / "prose.toml").open("a", encoding="utf-8") as config:
        config.write("\n" + "\n".join(tables))
    for name, body in files.items():
        (root / name).write_text(body, encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    agent = bin_dir / "my-agent"
    agent.write_text(AGENT, encoding="utf-8")
    agent.chmod(agent.stat().st_mode | stat.S_IXUSR)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    for args in (("build", "--offline-tools"), ("activate",)):
        assert run_prosec(*args, cwd=root).returncode == 0
    cold = run_prosec("run", "--input", "audience=editors", cwd=root, env=env)
    assert cold.returncode == 0, cold.stdout + cold.stderr
    payload = {"breaking": ["Bridge reopens"], "features": ["Ferry crew"], "received_at": "08:00"}
    woken = run_prosec("trigger", "wire-feed", "--data", json.dumps(payload), cwd=root, env=env)
    assert woken.returncode == 0, woken.stdout + woken.stderr

    def truth(node: str, name: str) -> object:
        return json.loads((root / "state/world-model" / node / "published" / name).read_text())

    assert truth("features-desk", "summaries.json") == [
        {"story": "Ferry crew", "summary": "Ferry crew, in one line"}
    ]
    assert truth("front-page", "stories.json") == ["Bridge reopens", "Ferry crew"]
    assert truth("editor-briefing", "briefing.json") == {
        "audience": "editors",
        "lead": "Bridge reopens",
    }
    ledger = (root / "state/world-model/editor-briefing/receipts.jsonl").read_text()
    assert json.loads(ledger.splitlines()[-1])["cost"]["provider"] == "python"
    front = json.loads(
        (root / "state/world-model/front-page/receipts.jsonl").read_text().splitlines()[-1]
    )
    assert front["cost"]["model"] == "my-model"
