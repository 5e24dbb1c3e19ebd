"""The shipped pytest plugin, used the way the README says, in a fresh pytest process."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import CORPUS

EXAMPLE = """
def test_compiled_intent(prosec_compile, prosec_snapshot):
    assert prosec_compile("src") == prosec_snapshot


def test_errors_fail_with_their_diagnostics(prosec_compile):
    prosec_compile("broken")
"""


def run_pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(root),
            *args,
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow  # four pytest processes
def test_snapshot_workflow(tmp_path: Path) -> None:
    shutil.copytree(CORPUS / "wiring-diamond" / "src", tmp_path / "src")
    shutil.copytree(CORPUS / "wiring-cycle" / "src", tmp_path / "broken" / "src")
    (tmp_path / "test_intent.py").write_text(EXAMPLE)
    created = run_pytest(tmp_path, "--snapshot-update", "test_intent.py::test_compiled_intent")
    assert created.returncode == 0, created.stdout + created.stderr
    snapshots = list((tmp_path / "__snapshots__").rglob("*.json"))
    assert len(snapshots) == 1
    assert '"kind": "openprose.compile-phase-ir"' in snapshots[0].read_text()
    assert run_pytest(tmp_path, "test_intent.py::test_compiled_intent").returncode == 0
    fulfillment = tmp_path / "src" / "fulfillment.prose.md"
    fulfillment.write_text(fulfillment.read_text().replace("paid, reserved", "reserved"))
    changed = run_pytest(tmp_path, "test_intent.py::test_compiled_intent")
    assert changed.returncode == 1
    errors = run_pytest(tmp_path, "test_intent.py::test_errors_fail_with_their_diagnostics")
    assert errors.returncode == 1
    assert "wiring_cycle" in errors.stdout
