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
        # 15 of the 44 fences use constructs outside the grammar (see the parser's test)
        "prosescript_syntax": 15,
        # std/ops/wire calls `resolver`, `matcher` and `manifest-writer`, defined nowhere
        "prosescript_unknown_call": 3,
        # refine, oversight and worker-critic re-`let` a loop result inside the loop, so
        # the value returned after the loop is still the outer `null`
        "prosescript_shadowed_binding": 3,
    }
    unknown = sorted({d.span.path for d in found if d.code == "prosescript_unknown_call"})
    assert unknown == ["packages/std/ops/wire.prose.md"]
    shadowed = sorted(
        d.span.path.rsplit("/", 1)[-1] for d in found if d.code.endswith("shadowed_binding")
    )
    assert shadowed == ["oversight.prose.md", "refine.prose.md", "worker-critic.prose.md"]
