"""`prosec lsp` end to end: a real client talks to the real process over stdio."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from .conftest import Editor, utf16_length

pytestmark = pytest.mark.asyncio


async def test_open_publishes_lint_diagnostics_with_utf16_ranges(
    editor: Editor, project: Path
) -> None:
    path = project / "src" / "outreach.prose.md"
    uri = editor.open(path)
    found = await editor.diagnostics_of(uri, 1)
    codes = sorted(str(d.code) for d in found)
    assert codes == ["continuity_unclear", "id_missing", "section_retired"]
    lines = path.read_text(encoding="utf-8").split("\n")
    unclear = next(d for d in found if d.code == "continuity_unclear")
    number = next(i for i, line in enumerate(lines) if line.startswith("### Continuity"))
    assert unclear.range == lsp.Range(
        start=lsp.Position(line=number, character=0),
        end=lsp.Position(line=number, character=utf16_length(lines[number])),
    )
    assert utf16_length(lines[number]) == len(lines[number]) + 1  # the emoji is two units
    assert unclear.severity == lsp.DiagnosticSeverity.Warning
