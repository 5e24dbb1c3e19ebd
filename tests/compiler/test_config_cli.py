"""One prose.toml, one verdict: every command loads it through the runtime's checker.

A bad setting makes every command exit 2 with the same message (file, line, key); a good
one is accepted by all of them, and a cadence the compiler emits is one `run` keeps.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import CORPUS, Runner

NEWSROOM = CORPUS / "newsroom"

# every command that reads a project's settings, run in the project's directory
COMMANDS = [
    ("lint", "."),
    ("build", "."),
    ("graph", "."),
    ("explain", "front-page", "."),
    ("run", "."),
    ("run", ".", "--due"),
    ("trigger", "wire-feed", "--data", "{}", "--root", "."),
    ("tick", "front-page", "--root", "."),
    ("resume", "latest", "--root", "."),
    ("status", "."),
    ("inspect", "latest", "--root", "."),
    ("receipts", "list", "."),
    ("receipts", "verify", "."),
    ("receipts", "cost", "."),
    ("preflight", "."),
    ("install", "."),
    ("serve", ".", "--port", "0"),
    ("devtools", ".", "--port", "0"),
]
# `validate` and `activate` read a compiled intent, never prose.toml; the language server
# reports the same message as a diagnostic (tests/compiler/lsp/test_workspace.py).


@pytest.fixture
def newsroom(tmp_path: Path) -> Path:
    root = tmp_path / "newsroom"
    shutil.copytree(NEWSROOM, root, ignore=shutil.ignore_patterns("dist", "runs", "state"))
    return root


def _errors(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("prosec: error:")]


def test_a_bad_setting_fails_every_command_alike(newsroom: Path, run_prosec: Runner) -> None:
    toml = newsroom / "prose.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace("jobs = 2", 'jobs = "two"'))
    line = toml.read_text(encoding="utf-8").splitlines().index('jobs = "two"') + 1
    expected = [f"prosec: error: {toml.resolve()}:{line}: run.jobs: 'two' is not of type 'integer'"]
    for command in COMMANDS:
        result = run_prosec(*command, cwd=newsroom, timeout=60)
        assert (result.returncode, _errors(result)) == (2, expected), (command, result.stderr)
        assert "Traceback" not in result.stderr


def test_a_missing_source_folder_fails_every_command_alike(
    newsroom: Path, run_prosec: Runner
) -> None:
    # `[build] source` naming no folder: `build` refused it (exit 2) while `lint` passed
    # (exit 0) and `preflight` and `install` crashed (exit 3), as the check lived in
    # build's command instead of in the one loader
    toml = newsroom / "prose.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + '\n[build]\nsource = "nope"\n')
    line = toml.read_text(encoding="utf-8").splitlines().index('source = "nope"') + 1
    expected = [
        f"prosec: error: {toml.resolve()}:{line}: build.source: "
        "'nope' is not a directory of the project"
    ]
    for command in COMMANDS:
        result = run_prosec(*command, cwd=newsroom, timeout=60)
        assert (result.returncode, _errors(result)) == (2, expected), (command, result.stderr)


def test_lint_no_longer_accepts_what_build_refuses(newsroom: Path, run_prosec: Runner) -> None:
    # the drift this module removes: `lint` read only [lint], so it exited 0 here
    (newsroom / "prose.toml").write_text('[run]\njobs = "two"\n', encoding="utf-8")
    lint = run_prosec("lint", newsroom)
    build = run_prosec("build", newsroom)
    assert (lint.returncode, build.returncode) == (2, 2)
    assert _errors(lint) == _errors(build) != []


def test_the_readme_lint_table_and_tools_build(newsroom: Path, run_prosec: Runner) -> None:
    # a `$ref` with a `description` beside it lost its `$defs`: build, graph and explain
    # exited 3 (PointerToNowhere) on the README's own `ignore = ["section_unknown"]`
    toml = newsroom / "prose.toml"
    toml.write_text(
        toml.read_text(encoding="utf-8")
        + '\n[lint]\nignore = ["section_unknown"]\n\n'
        + '[tools]\nmcp_registries = [".mcp.json"]\nskill_paths = ["vendor/skills"]\n',
        encoding="utf-8",
    )
    for command in (("build", "."), ("graph", "."), ("explain", "front-page", ".")):
        result = run_prosec(*command, cwd=newsroom)
        assert result.returncode == 0, (command, result.stderr)


def test_the_pytest_plugin_reports_a_bad_setting(newsroom: Path) -> None:
    (newsroom / "prose.toml").write_text("[lint]\nstrict = 1\n", encoding="utf-8")
    (newsroom / "test_intent.py").write_text(
        "def test_intent(prosec_compile):\n    prosec_compile('.')\n", encoding="utf-8"
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", "."],
        cwd=newsroom,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "prose.toml:2: lint.strict: 1 is not of type 'boolean'" in result.stdout
    assert "Traceback" not in result.stdout


ARCHIVE = """\
---
name: archive
kind: responsibility
id: 0ARCH1VE0000000000000000MB
---

# Archive

### Maintains

- `shelf`: the month's stories, filed

### Continuity

- self-driven: monthly
"""

RENDER = (
    "import json, os, pathlib; "
    "pathlib.Path(os.environ['PROSEC_OUTPUT'], 'shelf.json').write_text(json.dumps(['filed']))"
)


def test_a_monthly_node_builds_activates_and_runs(tmp_path: Path, run_prosec: Runner) -> None:
    # "self-driven: monthly" compiled to P1M, which `run` refused (exit 2) before months
    # were part of the runtime's grammar
    root = tmp_path / "archive"
    (root / "src").mkdir(parents=True)
    (root / "src" / "archive.prose.md").write_text(ARCHIVE, encoding="utf-8")
    (root / "prose.toml").write_text(
        f'[render.default]\nkind = "command"\ncommand = {json.dumps([sys.executable, "-c", RENDER])}\n',
        encoding="utf-8",
    )
    assert run_prosec("build", root).returncode == 0
    intent = json.loads((root / "dist" / "manifest.next.json").read_text(encoding="utf-8"))
    (node,) = intent["topology"]["nodes"]
    assert (node["wake_source"], node["cadence"]) == ("self", "P1M")
    assert run_prosec("activate", root).returncode == 0
    first = run_prosec("run", root, "--due", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["rendered"] == ["archive"]
    again = run_prosec("run", root, "--due", "--json")  # a month has not passed
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["rendered"] == []
