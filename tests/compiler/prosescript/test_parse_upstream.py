"""Every ```prose fence in the upstream programs parses, or fails with a positioned syntax error."""

from __future__ import annotations

from pathlib import Path

import pytest
from prosec.compiler.ir import Fence
from prosec.compiler.parse import parse_source
from prosec.compiler.prosescript.parse import parse_script

PROSE = ("prose", "prosescript")

# Fences that use constructs outside the ProseScript grammar of prosescript.md: `record … in`,
# `append … to`, `continue`, `name(args)` calls and `list[index]`. The grammar rejects them
# deliberately; this list changes only when the grammar or the upstream programs do.
OUTSIDE_THE_GRAMMAR = {
    "packages/std/evals/contract-grader.prose.md",  # session extract(subject)
    "packages/std/evals/regression-tracker.prose.md",  # call registry(subject, …)
    "packages/std/patterns/blind-review.prose.md",  # record report in staged_reports
    "packages/std/patterns/dialectic.prose.md",  # record {…} in exchange
    "packages/std/patterns/fallback-chain.prose.md",  # record {…} in failure_history
    "packages/std/patterns/fan-out.prose.md",  # briefs[index]
    "packages/std/patterns/pipeline.prose.md",  # record current_input in stage_outputs
    "packages/std/patterns/race.prose.md",  # continue
    "packages/std/patterns/ratchet.prose.md",  # append proposal to certified_progress
    "packages/std/patterns/retry-with-learning.prose.md",  # record {…} in failure_history
    "skills/open-prose/examples/renewal-risk/src/renewal-alert-feed.prose.md",  # read_subscription(…)
    "skills/open-prose/examples/renewal-risk/src/renewal-risk.prose.md",  # read_world_model(…)
    "skills/open-prose/examples/vendor-renewal-watch/src/collect-renewal-signals.prose.md",
    "skills/open-prose/examples/vendor-renewal-watch/src/prepare-renewal-brief.prose.md",
    "skills/open-prose/examples/vendor-renewal-watch/src/vendor-renewals-prepared.prose.md",
}


def upstream_fences(root: Path) -> list[tuple[str, str, Fence]]:
    found = []
    for file in sorted(root.rglob("*.prose.md")):
        path = file.relative_to(root).as_posix()
        text = file.read_text(encoding="utf-8")
        source, _ = parse_source(path, text)
        found += [(path, text, f) for f in source.fences if f.info in PROSE]
    return found


@pytest.mark.conformance
def test_every_upstream_fence_parses_or_reports_a_positioned_syntax_error(upstream: Path) -> None:
    fences = upstream_fences(upstream)
    assert len(fences) == 44
    parsed, failed = [], set()
    for path, text, fence in fences:
        script, found = parse_script(fence, path)
        lines = text.split("\n")
        if script is not None:
            assert found == []
            assert script.span.line == fence.content_line
            parsed.append(path)
            continue
        (diagnostic,) = found
        assert diagnostic.code == "prosescript_syntax"
        span = diagnostic.span
        assert span.path == path
        # inside the fence's content, on a real character (or just past the line's end)
        assert fence.content_line <= span.line <= fence.span.end_line - 1
        assert 1 <= span.column <= len(lines[span.line - 1]) + 1
        assert (span.line, span.column) < (span.end_line, span.end_column)
        failed.add(path)
    assert failed == OUTSIDE_THE_GRAMMAR
    assert len(parsed) == 29  # reported in the README's ProseScript section
