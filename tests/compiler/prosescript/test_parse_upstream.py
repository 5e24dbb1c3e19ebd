"""Every ```prose fence in the upstream programs parses, or fails with a positioned syntax error."""

from __future__ import annotations

from pathlib import Path

import pytest
from prosec.compiler.ir import Fence
from prosec.compiler.parse import parse_source
from prosec.compiler.prosescript.checks import nodes
from prosec.compiler.prosescript.parse import parse_script

PROSE = ("prose", "prosescript")

# Fences that still fail to parse, with the reason each; empty since the grammar took in
# `name(args)` calls, indexing, `record … in`, `append … to`, `continue`, `filter … where`,
# `call f with {…}` and `write_world_model value` (README, "ProseScript beyond the
# reference grammar"). A new entry needs a reason and a README line.
STILL_FAILING: dict[str, str] = {}


def upstream_fences(root: Path) -> list[tuple[str, str, Fence]]:
    found = []
    for file in sorted(root.rglob("*.prose.md")):
        path = file.relative_to(root).as_posix()
        text = file.read_text(encoding="utf-8")
        source, _ = parse_source(path, text)
        found += [(path, text, f) for f in source.fences if f.info in PROSE]
    return found


@pytest.mark.conformance
def test_every_upstream_fence_parses(upstream: Path) -> None:
    fences = upstream_fences(upstream)
    assert len(fences) == 44
    failed = {}
    for path, text, fence in fences:
        script, found = parse_script(fence, path)
        lines = text.split("\n")
        if script is not None:
            assert found == []
            assert script.span.line == fence.content_line
            continue
        # a failure is still one positioned syntax error inside the fence
        (diagnostic,) = found
        assert diagnostic.code == "prosescript_syntax"
        span = diagnostic.span
        assert span.path == path
        assert fence.content_line <= span.line <= fence.span.end_line - 1
        assert 1 <= span.column <= len(lines[span.line - 1]) + 1
        assert (span.line, span.column) < (span.end_line, span.end_column)
        failed[path] = diagnostic.message
    assert set(failed) == set(STILL_FAILING), failed


@pytest.mark.conformance
def test_every_upstream_fence_builds_spans_inside_its_fence(upstream: Path) -> None:
    for path, _, fence in upstream_fences(upstream):
        script, _ = parse_script(fence, path)
        assert script is not None
        for node in nodes(script.statements):
            span = getattr(node, "span")  # noqa: B009 - every IR node has one
            assert span.path == path
            assert fence.content_line <= span.line <= span.end_line < fence.span.end_line
