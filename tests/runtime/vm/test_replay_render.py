"""The `replay` render kind drives a VM file run as it drives a project run: each step
copies its recording, `<dir>/<node>/<step>/` (else `<dir>/<node>/`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .support import VmProject

LOOPS = {"answers": {"the dough has doubled": [False, False, True]}}


def _record(run: Path, recording: Path) -> int:
    """A run's step outputs, `staging/<node>/<step>.<attempt>/`, as a replay recording."""
    count = 0
    for attempt in sorted((run / "staging").glob("*/*")):
        step = attempt.name.rsplit(".", 1)[0]
        shutil.copytree(attempt, recording / attempt.parent.name / step)
        count += 1
    return count


def test_the_replay_render_reproduces_a_vm_file_run(tmp_path: Path) -> None:
    project = VmProject.create(tmp_path, "vm-loops", "bread-proofing", LOOPS)
    first = project.run("--loaves", '["rye", "spelt"]')
    one = project.run_dir(first["run_id"])
    assert _record(one, project.root / "recording") == len(project.steps()) > 3
    steps = project.steps()
    (project.root / "prose.toml").write_text(
        '[render.default]\nkind = "replay"\ndir = "recording"\n'
    )
    second = project.run("--loaves", '["rye", "spelt"]')
    assert project.steps() == steps  # the fake agent ran no step
    assert second["result"] == first["result"]
    two = project.run_dir(second["run_id"])
    for name in ("vm/result.json", "vm/bindings.json", "vm/journal.jsonl"):
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    assert project.markers(first["run_id"]) == project.markers(second["run_id"])
    # a step with no recording fails as a node render without one does
    shutil.rmtree(project.root / "recording")
    (project.root / "recording").mkdir()
    third = project.run("--loaves", '["rye"]', expect=1)
    assert "no recording" in json.dumps(third)
