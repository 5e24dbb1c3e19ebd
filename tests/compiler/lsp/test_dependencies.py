"""The language server and dependencies: deps/ read from disk, definition into it."""

from __future__ import annotations

from pathlib import Path

from prosec.compiler.lsp import navigation, wiring
from prosec.compiler.lsp.disk import LocalDisk
from prosec.compiler.lsp.workspace import Workspace

from ..deps.test_load import COOK, LIB, LOOP, PRICE, board, project


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.split("\n"), 1) if needle in line)


def test_definition_goes_into_deps(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            "prose.toml": "",
            "src/board.prose.md": board(),
            "src/cook.prose.md": COOK,
            f"{LIB}/loop.prose.md": LOOP,
            f"{LIB}/price.prose.md": PRICE,
        },
    ).resolve()
    workspace = Workspace(LocalDisk(), wiring.wire)
    analysis = workspace.analysis(root)
    assert analysis.diagnostics == ()
    assert analysis.topology is not None
    assert [n.name for n in analysis.topology.nodes] == ["board", "cook", "tasted"]
    text = board()
    use = _line(text, 'use "example.org')
    (target,) = navigation.definition(analysis, "src/board.prose.md", use, 8)
    assert (target.path, target.line) == (f"{LIB}/price.prose.md", 2)
    assert analysis.locate(target) == root / LIB / "price.prose.md"
    pattern = _line(text, "pattern: example.org")
    (target,) = navigation.definition(analysis, "src/board.prose.md", pattern, 5)
    assert target.path == f"{LIB}/loop.prose.md"


def test_a_missing_dependency_is_reported_and_installing_clears_it(tmp_path: Path) -> None:
    root = project(
        tmp_path, {"prose.toml": "", "src/board.prose.md": board(), "src/cook.prose.md": COOK}
    ).resolve()
    workspace = Workspace(LocalDisk(), wiring.wire)
    found = workspace.analysis(root).diagnostics_for("src/board.prose.md")
    assert [d.code for d in found] == ["dependency_missing", "dependency_missing"]
    project(root, {f"{LIB}/loop.prose.md": LOOP, f"{LIB}/price.prose.md": PRICE})
    assert workspace.analysis(root).diagnostics == ()
