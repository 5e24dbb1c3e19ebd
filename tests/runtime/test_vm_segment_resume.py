"""A persistent agent's session whose store write fails (the store lost right after the
session ended, before its step was journaled): `resume` runs the step again under the
segment number it had, so the run ends with the rows and the segment files of an
uninterrupted run (host 1 and 2, not 2 and 3 with 1 missing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from prosec.runtime.backends import BackendError
from prosec.runtime.backends.filesystem import FilesystemBackend
from prosec.runtime.backends.sqlite import SqliteBackend
from prosec.runtime.backends.sqlmemory import SqlMemory
from prosec.runtime.vm.rows import read_rows
from prosec.runtime.vm.statelog import FsSink

from .test_vm_conformance import CASES, in_process, logical, reference
from .vm.support import VmProject


def _resume(project: VmProject, backend: Any, run: Path) -> bool:
    from prosec.runtime.config import load_config
    from prosec.runtime.runs import RunDir
    from prosec.runtime.vm import VmSettings
    from prosec.runtime.vm.driver import resume_vm

    settings = VmSettings(root=project.root, config=load_config(project.root), backend=backend)
    return resume_vm(settings, RunDir(run)).ok


@pytest.mark.parametrize("kind", ["filesystem", "sqlite"])
def test_a_failed_store_write_after_a_session_keeps_its_segment_number_on_resume(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry, table, args = CASES["vm-sessions"]
    expected = reference(tmp_path, "vm-sessions", monkeypatch)
    project = VmProject.create(tmp_path / kind, "vm-sessions", entry, table)

    def backend() -> Any:
        if kind == "filesystem":
            return FilesystemBackend(project.root / "state")
        return SqliteBackend(project.root / "state" / "prosec.db", runs=project.root / "runs")

    failed: list[int] = []

    def lost(*_: Any, **__: Any) -> Any:
        failed.append(1)
        raise BackendError("the store is gone")

    with monkeypatch.context() as patch:  # the first segment write fails
        patch.setattr(SqlMemory, "add_segment", lost)
        patch.setattr(FsSink, "segment", lost)
        store = backend()
        with pytest.raises(BackendError):
            in_process(project, store, args, monkeypatch, {})
        store.close()
    assert failed == [1]
    (run,) = (project.root / "runs").iterdir()
    assert sorted(p.name for p in (run / "agents" / "host").glob("host-*.md")) == ["host-001.md"]
    store = backend()
    try:
        assert _resume(project, store, run)
        rows = logical(read_rows(store, run, run.name), run.name)
    finally:
        store.close()
    rows["run"]["metadata"].pop("resumed", None)
    assert rows["segments"] == expected["segments"]
    assert [s[2] for s in rows["segments"]] == [1, 2]
    assert sorted(p.name for p in (run / "agents" / "host").glob("host-*.md")) == [
        "host-001.md",
        "host-002.md",
    ]
    assert rows == expected
