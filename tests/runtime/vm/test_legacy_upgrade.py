"""`prosec upgrade`: a legacy `.prose` program becomes `.prose.md` and a `.prose/` state
tree (seed 000) the current layout; `--dry-run` lists every change and writes nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ...conftest import REPO
from ..project import PROSEC
from .test_legacy_resume import CUT, DONE, TODO, harbour, steps, tree

SECRETS = ("user-tides01", "sess-1704326400000-tides7")


def upgrade(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(root.parent / "home")}
    return subprocess.run(
        [str(PROSEC), "upgrade", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def prosec(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(root.parent / "home")}
    return subprocess.run(
        [str(PROSEC), *args], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )


def plan(root: Path, *args: str) -> dict[str, Any]:
    result = upgrade(root, "--json", *args)
    assert result.returncode in (0, 1), result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    assert data["exit_code"] == result.returncode
    return data


def user_scope(root: Path) -> list[tuple[str, str, str | None]]:
    """The changes that migrate the user-scope `~/.prose/` (its agent pilot)."""
    home = root.parent / "home"
    return [
        ("move", str(home / ".prose/agents/pilot"), str(home / ".agents/prose/state/agents/pilot")),
        ("remove", str(home / ".prose"), None),
    ]


def test_a_dry_run_lists_every_change_and_writes_nothing(tmp_path: Path) -> None:
    root = harbour(tmp_path)
    before = tree(tmp_path)
    data = plan(root, "--dry-run")
    assert data["dry_run"] and data["errors"] == []
    assert [(c["action"], c["path"], c["to"]) for c in data["changes"]] == [
        ("write", "tides.prose.md", None),
        ("remove", "tides.prose", None),
        ("move", ".prose/.env", ".env"),
        ("move", ".prose/agents/almanac", "state/agents/almanac"),
        ("adopt", f".prose/runs/{DONE}", f"runs/{DONE}"),
        ("move", f".prose/runs/{DONE}", f"runs/{DONE}/legacy"),
        ("adopt", f".prose/runs/{CUT}", f"runs/{CUT}"),
        ("move", f".prose/runs/{CUT}", f"runs/{CUT}/legacy"),
        ("remove", ".prose", None),
        *user_scope(root),  # no PATH: the user-scope ~/.prose/ too
    ]
    details = {c["to"] or c["path"]: c["detail"] for c in data["changes"]}
    assert details[".env"] == "sets OPENPROSE_TELEMETRY, SESSION_ID, USER_ID"
    assert "6 finished step(s) journaled" in details[f"runs/{CUT}"]
    text = upgrade(root, "--dry-run")
    assert text.returncode == 0 and "11 change(s) planned; --dry-run wrote nothing" in text.stdout
    assert "would adopt .prose/runs/" in text.stdout
    for secret in SECRETS:
        assert secret not in text.stdout + json.dumps(data)
    assert tree(tmp_path) == before


def test_an_upgrade_migrates_program_and_state_and_the_run_resumes(tmp_path: Path) -> None:
    root = harbour(tmp_path)
    legacy_cut = tree(root / ".prose/runs" / CUT)
    env_bytes = (root / ".prose/.env").read_bytes()
    result = upgrade(root)
    assert result.returncode == 0, result.stderr
    assert "adopted .prose/runs/" in result.stdout and "removed .prose" in result.stdout
    assert not (root / ".prose").exists() and not (root / "tides.prose").exists()
    assert (root / ".env").read_bytes() == env_bytes
    assert (root / "state/agents/almanac/almanac-001.md").is_file()
    assert tree(root / "runs" / CUT / "legacy") == legacy_cut  # kept whole
    form = (root / "tides.prose.md").read_text()
    assert form.startswith("---\nname: tides\nkind: function\n---\n")
    for part in ("### Parameters", "- `station`: The tide gauge to read", "### Returns"):
        assert part in form
    assert "### Execution\n\n```prose\n" in form and "return plan\n```" in form
    assert "  let high = session" in form  # a parallel branch declares its binding
    lint = prosec(root, "lint", "--format", "json", "tides.prose.md")
    assert lint.returncode == 0 and json.loads(lint.stdout) == [], lint.stdout
    done = prosec(root, "resume", DONE)  # the complete run: finished, nothing to do
    assert done.returncode == 0 and "already finished" in done.stdout
    result_json = json.loads((root / "runs" / DONE / "vm/result.json").read_text())
    assert result_json == {"result": "All berths open; mind the sandbar at low water."}
    cut = prosec(root, "resume", CUT, "--json")
    assert cut.returncode == 0, cut.stderr
    assert steps(root) == TODO  # the upgraded interrupted run redoes no finished step
    again = upgrade(root)
    assert again.returncode == 0 and "nothing to upgrade" in again.stdout
    run = prosec(root, "run", "tides.prose.md", "--station", "Gauge 9")
    assert run.returncode == 0, run.stderr


def test_conflicts_and_broken_programs_are_errors_the_rest_migrates(tmp_path: Path) -> None:
    root = harbour(tmp_path)
    (root / "tides.prose.md").write_text("---\nname: other\nkind: function\n---\n")
    (root / ".env").write_text("KEPT=1\n")
    shutil.rmtree(root / "deps")  # the runs' program `use`s std/summarize: it won't compile
    data = plan(root)
    assert data["exit_code"] == 1
    errors = {e["path"]: e["error"] for e in data["errors"]}
    assert "tides.prose.md exists and differs" in errors["tides.prose"]
    assert "merge the settings by hand" in errors[".prose/.env"]
    assert "does not compile" in errors[f".prose/runs/{CUT}"]
    assert "dependency" in errors[f".prose/runs/{CUT}"]
    assert [(c["action"], c["path"]) for c in data["changes"]] == [
        ("move", ".prose/agents/almanac"),
        ("remove", ".prose"),
        *[change[:2] for change in user_scope(root)],
    ]
    assert (root / "tides.prose").is_file() and (root / ".prose/runs" / CUT).is_dir()
    assert (root / ".env").read_text() == "KEPT=1\n"
    assert (root / ".prose/.env").is_file()  # .prose/ keeps what was not migrated
    missing = upgrade(root, "no-such-place")
    assert missing.returncode == 2 and "no such file or directory" in missing.stderr
    (root / "notes.txt").write_text("x")
    other = upgrade(root, "notes.txt")
    assert other.returncode == 1 and "not a legacy `.prose` program" in other.stderr


def test_an_interrupted_upgrade_finishes_when_run_again(tmp_path: Path) -> None:
    root = harbour(tmp_path)
    assert upgrade(root).returncode == 0
    # as if the upgrade had stopped after adopting the run, before moving it into place
    (root / ".prose/runs").mkdir(parents=True)
    os.rename(root / "runs" / CUT / "legacy", root / ".prose/runs" / CUT)
    data = plan(root, "--dry-run")
    assert [(c["action"], c["path"], c["to"]) for c in data["changes"]] == [
        ("move", f".prose/runs/{CUT}", f"runs/{CUT}/legacy"),
        ("remove", ".prose", None),
    ]
    assert upgrade(root).returncode == 0 and not (root / ".prose").exists()


def test_with_no_path_the_user_scope_agents_migrate_too(tmp_path: Path) -> None:
    """Seed 000's user scope is `~/.prose/agents/{name}/`: with no PATH, `prosec upgrade`
    moves it to the user root's `state/agents/` (where `persist: user` memory lives),
    HOME respected; --dry-run names the user-scope agent and writes nothing."""
    root = harbour(tmp_path)
    home = root.parent / "home"
    memory = tree(home / ".prose/agents/pilot")
    before = tree(home)
    text = upgrade(root, "--dry-run")
    assert text.returncode == 0, text.stderr
    target = home / ".agents/prose/state/agents/pilot"
    assert f"would move {home / '.prose/agents/pilot'} -> {target}: user-scope agent pilot" in (
        text.stdout
    )
    assert tree(home) == before
    assert upgrade(root).returncode == 0
    assert tree(target) == memory and not (home / ".prose").exists()


def test_the_user_root_variable_and_given_paths_are_respected(tmp_path: Path) -> None:
    root = harbour(tmp_path)
    home = root.parent / "home"
    given = upgrade(root, ".")  # a PATH given: ~/.prose is left, and the output says so
    assert given.returncode == 0, given.stderr
    assert (home / ".prose/agents/pilot/memory.md").is_file()
    assert f"note: {home / '.prose'} (user-scope agent memory) is left as it is" in given.stdout
    elsewhere = tmp_path / "user-root"
    env = {**os.environ, "HOME": str(home), "OPENPROSE_USER_ROOT": str(elsewhere)}
    moved = subprocess.run(
        [str(PROSEC), "upgrade"], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )
    assert moved.returncode == 0, moved.stderr
    assert (elsewhere / "state/agents/pilot/pilot-001.md").is_file()
    assert not (home / ".agents").exists() and not (home / ".prose").exists()


def test_the_users_prose_folder_moves_to_agents_prose(tmp_path: Path) -> None:
    root = harbour(tmp_path)
    home = root.parent / "home"
    result = upgrade(root, str(home / ".prose"))
    assert result.returncode == 0, result.stderr
    assert (home / ".agents/prose/state/agents/pilot/pilot-001.md").is_file()
    assert not (home / ".prose").exists()


def test_the_corpus_example_upgrades_to_the_passing_program(tmp_path: Path) -> None:
    shutil.copy(REPO / "corpus/invalid/legacy_program/lamp-check.prose", tmp_path)
    (tmp_path / "home").mkdir()
    project = tmp_path / "p"
    project.mkdir()
    shutil.move(tmp_path / "lamp-check.prose", project / "lamp-check.prose")
    assert upgrade(project, "lamp-check.prose").returncode == 0
    expected = REPO / "corpus/lamp-check/src/lamp-check.prose.md"
    assert (project / "lamp-check.prose.md").read_bytes() == expected.read_bytes()
