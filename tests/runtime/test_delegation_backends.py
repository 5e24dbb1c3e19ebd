"""Delegation on every backend: lighthouse-watch's keeper yields to its delegate
`tide-almanac` and is resumed with the response (runtime/delegation.py); the same
trigger run on the filesystem, SQLite, PostgreSQL and in-context stores records the
same receipts, the same published versions and the same delegation markers, and the
run row of the SQL stores ends completed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prosec.runtime import serve
from prosec.runtime.backends import Backend
from prosec.runtime.backends.filesystem import FilesystemBackend
from prosec.runtime.backends.incontext import InContextBackend
from prosec.runtime.backends.postgres import PostgresBackend
from prosec.runtime.backends.sqlite import SqliteBackend
from prosec.runtime.executor import EngineOptions
from prosec.runtime.session import open_project

from .backends.sql_stores import database
from .test_e2e_delegation import KEEPER, delegating, events, make

BACKENDS = [
    "filesystem",
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.postgres),
    "in-context",
]
DATA = {"reports": [{"light": "skerry", "status": "dark"}]}


@pytest.fixture
def opened(request: pytest.FixtureRequest) -> Iterator[Any]:
    """kind, root → a function opening that store for the project at root."""
    contexts: list[Any] = []
    memory = InContextBackend()

    def open_for(kind: str, root: Path) -> Backend:
        if kind == "filesystem":
            return FilesystemBackend(root / "state")
        if kind == "sqlite":
            return SqliteBackend(root / "state" / "prosec.db", runs=root / "runs")
        if kind == "postgres":
            if not contexts:
                context = database(request.getfixturevalue("postgres_url"))
                contexts.append((context, context.__enter__()))
            return PostgresBackend(contexts[0][1], runs=root / "runs")
        return memory

    yield open_for
    for context, _ in contexts:
        context.__exit__(None, None, None)


def triggered(root: Path, backend: Backend, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """`prosec trigger lamp-reports --data …` in this process, on `backend`: the run's
    delegation markers, every node's receipts and published version, the run row."""
    monkeypatch.chdir(root)
    project = open_project(root)
    project.backend = backend
    project.bind_renders({})
    assert backend.try_lock()
    try:
        serve.enqueue_trigger(project, "lamp-reports", DATA)
        run, summary = serve.reconcile(
            project,
            kind="trigger",
            wakes=[],
            all_nodes=False,
            inputs={},
            options=EngineOptions(jobs=2),
        )
    finally:
        backend.unlock()
    assert summary.failed == [], summary.failed
    state = backend.run_state
    row = state.run(run.run_id) if state is not None else None
    return {
        "rendered": sorted(summary.rendered),
        "events": events(run.path),
        "receipts": {node: backend.ledger(node) for node in project.intent.order},
        "published": {node: backend.published_version(node) for node in project.intent.order},
        "run": None if row is None else row["status"],
    }


_REFERENCE: dict[str, Any] = {}


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_delegating_render_records_the_same_receipts_on_every_backend(
    kind: str, opened: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    call = ("tide-almanac", "req-001", "next high water at the skerry")
    if not _REFERENCE:
        root = make(tmp_path / "reference")
        delegating(root, call)
        _REFERENCE.update(triggered(root, FilesystemBackend(root / "state"), monkeypatch))
    expected = json.loads(json.dumps(_REFERENCE))
    root = make(tmp_path / kind)
    delegating(root, call)
    backend = opened(kind, root)
    try:
        got = json.loads(json.dumps(triggered(root, backend, monkeypatch)))
    finally:
        if kind != "in-context":
            backend.close()
    assert got["events"][1:4] == [
        f"2→ {KEEPER} ⇒ tide-almanac (delegate: req-001)",
        "2→ tide-almanac ✓",
        f"2→ {KEEPER} ⟳ (resumed)",
    ]
    assert got["receipts"][KEEPER] and got["receipts"][KEEPER][-1]["status"] == "rendered"
    tables = kind in ("sqlite", "postgres")  # the filesystem and in-context have no run table
    assert got["run"] == ("completed" if tables else None)
    expected["run"] = got["run"]
    assert got == expected
