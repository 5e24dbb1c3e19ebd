"""Every feature at every structural point of the 255 upstream programs: no exceptions."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from prosec.compiler.lsp import actions, completion, hover, navigation, wiring
from prosec.compiler.lsp.disk import LocalDisk
from prosec.compiler.lsp.positions import UTF16
from prosec.compiler.lsp.workspace import Analysis, Workspace


def _points(analysis: Analysis, display: str) -> list[tuple[int, int]]:
    source = analysis.source(display)
    assert source is not None
    points = [(1, 1)]
    for contract in source.contracts:
        points.append((contract.name_span.line, contract.name_span.column + 1))
        for section in contract.sections:
            points.append((section.heading_span.line, 5))
            points += [(f.heading_span.line, 6) for f in section.facets]
            points += [(n.span.line, n.span.column + 2) for n in section.needs]
    return points


@pytest.mark.conformance
def test_every_feature_survives_the_upstream_corpus(upstream: Path) -> None:
    workspace = Workspace(LocalDisk(), wiring.wire)
    workspace.folders = [upstream]
    roots = workspace.folder_roots()
    statuses: Counter[str] = Counter()
    for root in roots:
        analysis = workspace.analysis(root)
        assert "internal_error" not in {d.code for d in analysis.diagnostics}, root
        if analysis.topology is not None:
            statuses.update(r.status for r in analysis.topology.resolutions)
        for display in analysis.paths:
            source = analysis.source(display)
            assert source is not None
            navigation.document_symbols(source)
            for line, column in _points(analysis, display):
                hover.hover(analysis, display, line, column)
                navigation.definition(analysis, display, line, column)
                navigation.references(analysis, display, line, column, True)
                completion.complete(analysis, display, line, column)
                request = actions.Request(
                    display=display,
                    start=(line, 1),
                    end=(line, column),
                    encoding=UTF16,
                    toml_text=None,
                )
                actions.code_actions(analysis, request)
    assert len(roots) > 10
    assert statuses["wired"] > 100
