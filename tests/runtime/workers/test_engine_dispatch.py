"""The engine's side of dispatched renders, in process on the filesystem backend: a
dispatched wave's jobs carry the versions they read and no prepared request (their
worker prepares them), and a failure for a render that never ran here is judged and
committed without one, as the dispatcher does for a job that ended without a receipt."""

from __future__ import annotations

from pathlib import Path

from prosec.runtime import serve
from prosec.runtime.executor import Engine, EngineOptions, Job, RunSummary, Wave
from prosec.runtime.renders import RenderOutcome
from prosec.runtime.runs import RunDir
from prosec.runtime.session import open_project

from ..project import Project, intent


def test_a_dispatched_render_is_not_prepared_here_and_fails_without_a_request(
    tmp_path: Path,
) -> None:
    edges = [("b", "a", "@atomic")]
    root = Project.create(tmp_path / "p", intent({"a": {}, "b": {}}, edges))
    first = open_project(root.root)
    first.bind_renders({})
    assert serve.serve(
        first, kind="run", wakes=[], inputs={}, options=EngineOptions(), on_run=lambda r, s: None
    )
    versions = {n: first.backend.published_version(n) for n in ("a", "b")}
    first.backend.close()
    root.set_intent(intent({"a": {}, "b": {"v": 2}}, edges))  # b's contract changed
    project = open_project(root.root)
    project.bind_renders({})
    dispatched: list[tuple[str, tuple[tuple[str, str], ...]]] = []
    runs: list[tuple[RunDir, RunSummary]] = []

    def dispatch(engine: Engine, run: RunDir, jobs: list[Job], event: int, wave: Wave) -> None:
        for job in jobs:
            assert job.request is None
            dispatched.append((job.node, job.pinned))
            outcome = RenderOutcome(ok=False, error="worker-error", detail="no receipt came")
            receipt, files, marker = engine.judge(run, job, outcome, str(event))
            address = engine.commit(run, job.node, receipt, files, marker)
            engine.settle(run, job, receipt, address, wave)

    serve.serve(
        project,
        kind="run",
        wakes=[],
        inputs={},
        options=EngineOptions(dispatch=dispatch),
        on_run=lambda run, summary: runs.append((run, summary)),
    )
    project.backend.close()
    # b renders again, reading a's version and its own prior, pinned by the runner
    assert dispatched == [("b", (("a", versions["a"]), ("b", versions["b"])))]
    [(run, summary)] = runs
    assert summary.failed == [("b", "worker-error", "no receipt came")]
    assert not run.workspace("b").exists()  # nothing was prepared in the runner's run
    assert not (run.path / "world-model" / "a").exists()  # nor its inputs pinned here
    [receipt] = run.receipts("b")
    assert receipt["status"] == "failed"
    assert receipt["semantic_diff"] == {"error": "worker-error", "reason": "no receipt came"}
    assert any(line.endswith("→ b ✗ worker-error") for line in run.log_lines())
