"""The ProseScript checks over the upstream programs: what they report, and nothing else."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from prosec.compiler.config import Config
from prosec.compiler.discover import discover
from prosec.compiler.lint import lint_refs


@pytest.mark.conformance
def test_upstream_prosescript_findings(upstream: Path) -> None:
    result = lint_refs(discover([upstream], upstream), Config())
    found = [d for d in result.diagnostics if d.code.startswith("prosescript")]
    assert Counter(d.code for d in found) == {
        # std/ops/wire calls `resolver`, `matcher` and `manifest-writer`, defined nowhere
        "prosescript_unknown_call": 3,
        # refine, oversight, worker-critic, pipeline and dialectic (twice) re-`let` a loop
        # result inside the loop, so the value after the loop is still the outer one
        "prosescript_shadowed_binding": 6,
        # std/patterns/fan-out passes `task_brief`, which it never declares
        "prosescript_undefined_name": 1,
        # vendor-renewal-watch calls helpers it describes only in prose (infos)
        "prosescript_render_operation": 4,
    }
    unknown = sorted({d.span.path for d in found if d.code == "prosescript_unknown_call"})
    assert unknown == ["packages/std/ops/wire.prose.md"]
    shadowed = sorted(
        d.span.path.rsplit("/", 1)[-1] for d in found if d.code.endswith("shadowed_binding")
    )
    assert shadowed == [
        "dialectic.prose.md",
        "dialectic.prose.md",
        "oversight.prose.md",
        "pipeline.prose.md",
        "refine.prose.md",
        "worker-critic.prose.md",
    ]
    (undefined,) = [d for d in found if d.code == "prosescript_undefined_name"]
    assert (undefined.span.path, "`task_brief`" in undefined.message) == (
        "packages/std/patterns/fan-out.prose.md",
        True,
    )
    operations = sorted(
        d.message.split("(", 1)[0] for d in found if d.code == "prosescript_render_operation"
    )
    assert operations == ["`build_ledger", "`draft_brief", "`newest_at", "`normalize_and_dedupe"]
