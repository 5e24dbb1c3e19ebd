"""corpus/menu-board end to end: its dependency, corpus/kitchen-lib, is published to a bare
repository at test time; `prosec install --frozen` clones it at the commit the committed
prose.lock pins, then the program lints, builds, runs and passes preflight.

The commit is the same on every machine (fixed author, dates and message), which is what
lets the corpus commit a prose.lock for it."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from ...conftest import CORPUS, Runner
from .repos import Mirror

APP = CORPUS / "menu-board"
LIBRARY = CORPUS / "kitchen-lib"
REPO = "example.org/acme/kitchen-lib"
PUBLISHED = "2025-03-01T09:00:00Z"
STOCK = {
    "stock": [
        {"item": "tomato", "quantity": 6, "cost": 0.4},
        {"item": "onion", "quantity": 4, "cost": 0.2},
        {"item": "egg", "quantity": 0, "cost": 0.3},
        {"item": "lettuce", "quantity": 2, "cost": 0.9},
    ],
    "counted_at": "07:30",
}


def publish_library(mirror: Path, work: Path) -> str:
    """corpus/kitchen-lib, every file, as one commit of `acme/kitchen-lib`."""
    files = {
        path.relative_to(LIBRARY).as_posix(): path.read_bytes()
        for path in sorted(LIBRARY.rglob("*"))
        if path.is_file()
    }
    return Mirror(mirror, work).publish(
        "acme/kitchen-lib", files, date=PUBLISHED, message="kitchen-lib 1.0"
    )


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = tmp_path / "menu-board"
    shutil.copytree(APP, root, ignore=shutil.ignore_patterns("deps", "mirror", "dist", "runs"))
    publish_library(root / "mirror", tmp_path / "work")
    return root


def locked(root: Path) -> dict[str, str]:
    lines = (root / "prose.lock").read_text(encoding="utf-8").splitlines()
    return dict(line.split() for line in lines if line and not line.startswith("#"))


def test_the_committed_lock_pins_the_published_library(tmp_path: Path) -> None:
    published = publish_library(tmp_path / "mirror", tmp_path / "work")
    assert locked(APP) == {REPO: published}, (
        f"corpus/kitchen-lib changed: update corpus/menu-board/prose.lock to `{REPO} {published}`"
    )


def test_install_build_run_and_preflight(app: Path, run_prosec: Runner) -> None:
    lint = run_prosec("lint", ".", cwd=app)
    assert lint.returncode == 1 and "dependency_missing" in lint.stdout  # not installed yet
    assert "prosec install" in lint.stdout

    started = time.monotonic()
    install = run_prosec("install", "--frozen", cwd=app)
    elapsed = time.monotonic() - started
    assert install.returncode == 0, install.stderr
    assert install.stdout == f"{REPO} {locked(app)[REPO]}\n"
    assert f"cloned {REPO}" in install.stderr
    assert elapsed < 30
    assert (app / "deps" / REPO / "src" / "tasting-loop.prose.md").is_file()

    assert run_prosec("lint", ".", cwd=app).returncode == 0
    build = run_prosec("build", "--offline-tools", cwd=app)
    assert build.returncode == 0, build.stderr
    intent = json.loads((app / "dist" / "manifest.next.json").read_text(encoding="utf-8"))
    paths = {source["path"] for source in intent["sources"]}
    assert f"deps/{REPO}/src/tasting-loop.prose.md" in paths
    assert f"deps/{REPO}/src/price-menu.prose.md" in paths
    nodes = {node["node"] for node in intent["topology"]["nodes"]}
    assert nodes == {"pantry-feed", "dish-ideas", "tasted-dishes", "menu-board"}
    edges = {(e["producer"], e["subscriber"]) for e in intent["topology"]["edges"]}
    assert ("dish-ideas", "tasted-dishes") in edges and ("tasted-dishes", "menu-board") in edges

    assert run_prosec("activate", cwd=app).returncode == 0
    trigger = run_prosec("trigger", "pantry-feed", "--data", json.dumps(STOCK), cwd=app)
    assert trigger.returncode == 0, trigger.stdout + trigger.stderr
    runs = sorted((app / "runs").iterdir())
    board = runs[-1] / "world-model" / "menu-board" / "board.json"
    assert json.loads(board.read_text(encoding="utf-8")) == [
        {"dish": "garden salad", "price": 2.0},
        {"dish": "tomato soup", "price": 1.0},
    ]
    snapshot = runs[-1] / "sources" / "deps" / REPO / "src" / "price-menu.prose.md"
    assert snapshot.read_bytes() == (LIBRARY / "src" / "price-menu.prose.md").read_bytes()

    # running is disk-only too: without deps/ the run stops before anything renders
    shutil.move(app / "deps", app / "deps-away")
    stopped = run_prosec("trigger", "pantry-feed", "--data", json.dumps(STOCK), cwd=app)
    assert stopped.returncode == 2
    assert f"deps/{REPO}/src/price-menu.prose.md: a dependency" in stopped.stderr
    assert "run `prosec install`" in stopped.stderr
    assert len(list((app / "runs").iterdir())) == len(runs)
    shutil.move(app / "deps-away", app / "deps")

    preflight = run_prosec("preflight", cwd=app)
    assert preflight.returncode == 0, preflight.stdout
    assert preflight.stdout.splitlines()[-1] == "preflight: pass"
    assert f"pass  dependency {REPO}: at {locked(app)[REPO][:12]}" in preflight.stdout


def test_compiling_and_running_never_run_git(app: Path, tmp_path: Path, run_prosec: Runner) -> None:
    """With deps/ installed, lint, build, activate, trigger and status run no `git`: one
    first on PATH that only records its calls and fails is never called (preflight, which
    does run git, calls it)."""
    assert run_prosec("install", "--frozen", cwd=app).returncode == 0
    shim = tmp_path / "shim"
    shim.mkdir()
    calls = tmp_path / "git-calls.txt"
    (shim / "git").write_text(f'#!/bin/sh\necho "$@" >> "{calls}"\nexit 1\n', encoding="utf-8")
    (shim / "git").chmod(0o755)
    env = {"PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"}
    for args in (
        ("lint", "."),
        ("build", "--offline-tools"),
        ("activate",),
        ("trigger", "pantry-feed", "--data", json.dumps(STOCK)),
        ("status",),
    ):
        result = run_prosec(*args, cwd=app, env=env)
        assert result.returncode == 0, (args, result.stdout + result.stderr)
    assert not calls.exists(), calls.read_text(encoding="utf-8")
    # the shim is live: preflight reaches it (and so fails its dependency check)
    preflight = run_prosec("preflight", cwd=app, env=env)
    assert preflight.returncode == 1 and calls.is_file()
