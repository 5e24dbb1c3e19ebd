"""The benchmark's synthetic projects build without errors (so `make bench` measures builds)."""

from __future__ import annotations

import json
from pathlib import Path

from prosec.compiler.build import BuildOptions, build
from prosec.compiler.config import Config
from prosec.compiler.diagnostics import Severity
from prosec.runtime.intent_check import iter_problems

from ..benchmarks.synth import generate


def test_a_synthetic_project_builds(tmp_path: Path) -> None:
    written = generate(120, tmp_path)
    assert len(written) == 120
    result = build(tmp_path, Config(offline_tools=True), None, BuildOptions())
    errors = [d for d in result.diagnostics if d.severity is Severity.ERROR]
    assert errors == []
    assert result.status == "written"
    manifest = tmp_path / "dist" / "manifest.next.json"
    assert [str(p) for p in iter_problems(json.loads(manifest.read_bytes()))] == []
