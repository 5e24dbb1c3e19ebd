"""The benchmark's synthetic projects build without errors (so `make bench` measures builds)."""

from __future__ import annotations

from pathlib import Path

from prosec.compiler.build import BuildOptions, build
from prosec.compiler.config import Config
from prosec.compiler.diagnostics import Severity

from ..benchmarks.synth import generate


def test_a_synthetic_project_builds(tmp_path: Path) -> None:
    written = generate(120, tmp_path)
    assert len(written) == 120
    result = build(tmp_path, Config(offline_tools=True), None, BuildOptions())
    errors = [d for d in result.diagnostics if d.severity is Severity.ERROR]
    assert errors == []
    assert result.status == "written"
    assert (tmp_path / "dist" / "manifest.next.json").is_file()
