"""The runtime as a library: `serve`, `resume` and the wake helpers, driven in process
without the CLI (prosec.compiler.commands.run only parses options around them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from prosec.runtime import serve
from prosec.runtime.backends import open_backend
from prosec.runtime.executor import EngineOptions, RunSummary
from prosec.runtime.runs import RunDir
from prosec.runtime.session import Project, SessionError, open_project

from .project import Project as Root
from .project import intent

EDGES = [("b", "g", "@atomic"), ("c", "b", "@atomic")]


def opened(tmp_path: Path) -> Project:
    doc = intent(
        {
            "g": {"wake_source": "external"},
            "b": {},
            "c": {"wake_source": "self", "cadence": "PT1H"},
        },
        EDGES,
        ["g"],
    )
    Root.create(tmp_path / "p", doc)
    project = open_project(tmp_path / "p")
    project.bind_renders({})
    return project


class Runs:
    """An `on_run` that keeps what each run did."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, RunSummary]] = []

    def __call__(self, run: RunDir, summary: RunSummary) -> None:
        self.seen.append((run.info()["kind"], summary))


def test_serve_reconciles_then_takes_wakes_queued_meanwhile(tmp_path: Path) -> None:
    project = opened(tmp_path)
    runs = Runs()

    def queue_once_reported(run: RunDir, summary: RunSummary) -> None:
        runs(run, summary)
        if len(runs.seen) == 1:  # a tick that arrived after the engine's last look
            (project.root / "world/c.json").write_text('{"t": 2}')
            serve.enqueue_tick(project, "c")

    options = EngineOptions()
    assert serve.serve(
        project, kind="run", wakes=[], inputs={}, options=options, on_run=queue_once_reported
    )
    assert [kind for kind, _ in runs.seen] == ["run", "inbox"]
    first, inbox = (summary for _, summary in runs.seen)
    assert sorted(first.rendered) == ["b", "c", "g"]
    assert inbox.rendered == ["c"]
    assert project.backend.inbox() == []
    assert project.backend.try_lock()  # released after each run
    project.backend.unlock()


def test_a_trigger_is_fingerprinted_by_content(tmp_path: Path) -> None:
    project = opened(tmp_path)
    runs = Runs()
    serve.serve(project, kind="run", wakes=[], inputs={}, options=EngineOptions(), on_run=runs)
    for _ in range(2):
        serve.enqueue_trigger(project, "g", {"reading": 7})
        serve.serve(
            project, kind="trigger", wakes=[], inputs={}, options=EngineOptions(), on_run=runs
        )
    assert [summary.rendered for _, summary in runs.seen[1:]] == [["g", "b", "c"], []]
    assert runs.seen[2][1].skipped == ["g"]


def test_wake_helpers_refuse_what_is_not_a_node_or_gateway(tmp_path: Path) -> None:
    project = opened(tmp_path)
    with pytest.raises(SessionError, match=r"trigger: 'nope' is not a node"):
        serve.enqueue_trigger(project, "nope", 1)
    with pytest.raises(SessionError, match=r"trigger: 'b' is not a gateway"):
        serve.enqueue_trigger(project, "b", 1)
    with pytest.raises(SessionError, match=r"tick: 'nope' is not a node"):
        serve.enqueue_tick(project, "nope")
    assert project.backend.inbox() == []
    assert serve.clocked_nodes(project) == frozenset({"c"})


def test_a_held_lock_queues_a_wake_and_refuses_a_run(tmp_path: Path) -> None:
    project = opened(tmp_path)
    other = open_backend("filesystem", project.root)  # another runner of the same root
    assert other.try_lock()
    try:
        runs = Runs()
        serve.enqueue_tick(project, "c")
        assert not serve.serve(
            project, kind="tick", wakes=[], inputs={}, options=EngineOptions(), on_run=runs
        )
        assert runs.seen == []
        with pytest.raises(SessionError, match="holds this root's state lock"):
            serve.serve(
                project, kind="run", wakes=[], inputs={}, options=EngineOptions(), on_run=runs
            )
    finally:
        other.unlock()
    # the queued wake waited for whoever holds the lock next
    assert [wake["node"] for _, wake in project.backend.inbox()] == ["c"]


def test_resume_finishes_a_cut_run(tmp_path: Path) -> None:
    project = opened(tmp_path)
    run = project.create_run("run", [], [])  # a run whose runner died before reconciling
    summary = serve.resume(project, run, EngineOptions())
    assert sorted(summary.rendered) == ["b", "c", "g"]
    assert run.finished() == "complete"
