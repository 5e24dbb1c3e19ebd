"""`prosec lsp` end to end: a real client talks to the real process over stdio."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcMethodNotFound

from ...conftest import Runner
from .client import Editor, utf16_length

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_open_publishes_lint_diagnostics_with_utf16_ranges(
    editor: Editor, project: Path
) -> None:
    path = project / "src" / "outreach.prose.md"
    uri = editor.open(path)
    found = await editor.diagnostics_of(uri, 1)
    codes = sorted(str(d.code) for d in found)
    assert codes == [
        "continuity_unclear",
        "id_missing",
        "section_retired",
        "wiring_ambiguous",
        "wiring_unsatisfied",
    ]
    lines = path.read_text(encoding="utf-8").split("\n")
    unclear = next(d for d in found if d.code == "continuity_unclear")
    number = next(i for i, line in enumerate(lines) if line.startswith("### Continuity"))
    assert unclear.range == lsp.Range(
        start=lsp.Position(line=number, character=0),
        end=lsp.Position(line=number, character=utf16_length(lines[number])),
    )
    assert utf16_length(lines[number]) == len(lines[number]) + 1  # the emoji is two units
    assert unclear.severity == lsp.DiagnosticSeverity.Warning


async def test_codes_and_severities_match_the_cli(
    editor: Editor, project: Path, run_prosec: Runner
) -> None:
    uri = editor.open(project / "src" / "outreach.prose.md")
    found = await editor.diagnostics_of(uri, 1)
    # `prosec build`, `prosec lint` and the server report the same findings, wiring included
    result = run_prosec("build", "--check", "--format", "json", project)
    records = [r for r in json.loads(result.stdout) if r["path"] == "src/outreach.prose.md"]
    lint = run_prosec("lint", "--format", "json", "src", cwd=project)
    linted = {r["code"] for r in json.loads(lint.stdout) if r["path"] == "src/outreach.prose.md"}
    assert linted == {r["code"] for r in records}  # lint runs the build's checks too
    severities = {"error": 1, "warning": 2, "info": 3}
    ours = sorted((str(d.code), int(d.severity or 0), d.range.start.line + 1) for d in found)
    assert ours == sorted((r["code"], severities[r["severity"]], r["line"]) for r in records)


async def test_edits_to_the_buffer_change_the_diagnostics(editor: Editor, project: Path) -> None:
    uri = editor.open(project / "src" / "outreach.prose.md")
    found = await editor.diagnostics_of(uri, 1)
    unclear = next(d for d in found if d.code == "continuity_unclear")
    version = editor.edit(
        uri, [lsp.TextEdit(range=unclear.range, new_text="### Continuity\n\n- input-driven")]
    )
    found = await editor.diagnostics_of(uri, version)
    assert sorted(str(d.code) for d in found) == [
        "id_missing",
        "section_retired",
        "wiring_ambiguous",
        "wiring_unsatisfied",
    ]
    # the file on disk is unchanged: the server linted the buffer
    assert "whenever the mood" in (project / "src" / "outreach.prose.md").read_text("utf-8")


async def test_hover_on_a_section_heading(editor: Editor, project: Path) -> None:
    uri = editor.open(project / "src" / "outreach.prose.md")
    await editor.diagnostics_of(uri, 1)
    lines = editor.texts[uri].split("\n")
    goal = lines.index("### Goal")
    result = await editor.text_document_hover_async(
        lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line=goal, character=5),
        )
    )
    assert result is not None and isinstance(result.contents, lsp.MarkupContent)
    assert "Applies to: responsibility, gateway." in result.contents.value
    assert result.range == lsp.Range(
        start=lsp.Position(line=goal, character=0), end=lsp.Position(line=goal, character=8)
    )
    retired = lines.index("### Constraints")
    result = await editor.text_document_hover_async(
        lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line=retired, character=6),
        )
    )
    assert result is not None and isinstance(result.contents, lsp.MarkupContent)
    assert "`### Invariants`" in result.contents.value


async def test_document_symbols_outline_the_contract(editor: Editor, project: Path) -> None:
    uri = editor.open(project / "src" / "accounts.prose.md")
    await editor.diagnostics_of(uri, 1)
    symbols = await editor.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    assert symbols is not None
    (node,) = symbols
    assert isinstance(node, lsp.DocumentSymbol)
    assert (node.name, node.kind) == ("accounts", lsp.SymbolKind.Class)
    sections = {s.name: s for s in node.children or []}
    assert list(sections) == ["Goal", "Requires", "Maintains", "Tools"]
    facets = [(c.name, c.kind) for c in sections["Maintains"].children or []]
    assert facets == [("enrichment", lsp.SymbolKind.Field), ("summary", lsp.SymbolKind.Field)]
    needs = [(c.name, c.kind) for c in sections["Requires"].children or []]
    assert needs == [("stargazers", lsp.SymbolKind.Property)]


async def _actions(editor: Editor, uri: str, diagnostic: lsp.Diagnostic) -> list[lsp.CodeAction]:
    result = await editor.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=lsp.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    return [a for a in result or [] if isinstance(a, lsp.CodeAction)]


def _edits_for(action: lsp.CodeAction, uri: str) -> list[lsp.TextEdit]:
    assert action.edit is not None and action.edit.document_changes is not None
    edits: list[lsp.TextEdit] = []
    for change in action.edit.document_changes:
        if isinstance(change, lsp.TextDocumentEdit) and change.text_document.uri == uri:
            edits += [e for e in change.edits if isinstance(e, lsp.TextEdit)]
    return edits


async def test_code_actions_applied_relint_clean(editor: Editor, project: Path) -> None:
    uri = editor.open(project / "src" / "outreach.prose.md")
    found = await editor.diagnostics_of(uri, 1)
    by_code = {str(d.code): d for d in found}
    (add_id,) = [a for a in await _actions(editor, uri, by_code["id_missing"]) if "id:" in a.title]
    assert add_id.kind == lsp.CodeActionKind.QuickFix and add_id.is_preferred
    version = editor.edit(uri, _edits_for(add_id, uri))
    found = await editor.diagnostics_of(uri, version)
    assert "id_missing" not in {d.code for d in found}
    new_id = re.search(r"^id: (\S+)$", editor.texts[uri], re.MULTILINE)
    assert new_id is not None and re.fullmatch(r"[0-7][0-9A-HJKMNP-TV-Z]{25}", new_id.group(1))

    retired = next(d for d in found if d.code == "section_retired")
    (rename,) = [a for a in await _actions(editor, uri, retired) if a.diagnostics]
    version = editor.edit(uri, _edits_for(rename, uri))
    found = await editor.diagnostics_of(uri, version)
    assert "section_retired" not in {d.code for d in found}
    assert "\n### Invariants\n" in editor.texts[uri]

    ambiguous = next(d for d in found if d.code == "wiring_ambiguous")
    titles = [a.title for a in await _actions(editor, uri, ambiguous) if a.diagnostics]
    assert titles == [
        "Wire to `accounts.summary` (name it in the need)",
        "Pin to `accounts.summary` in prose.toml",
        "Wire to `market.summary` (name it in the need)",
        "Pin to `market.summary` in prose.toml",
    ]
    (qualify,) = [a for a in await _actions(editor, uri, ambiguous) if a.title == titles[2]]
    version = editor.edit(uri, _edits_for(qualify, uri))
    found = await editor.diagnostics_of(uri, version)
    assert "wiring_ambiguous" not in {d.code for d in found}
    assert (
        "- `summary`: the summary to open the note with (from `market.summary`)"
        in editor.texts[uri]
    )
    hover = await _hover(editor, uri, "- `summary`", 4)
    assert "Wired on the **qualified** rung" in hover and "`market` facet `summary`" in hover

    # the last two findings are fixed by hand: the buffer lints clean
    lines = editor.texts[uri].split("\n")
    lines = [line for line in lines if not line.startswith("- `weather-forecast`")]
    text = "\n".join(lines).replace(
        "### Continuity: whenever the mood 😀 strikes", "### Continuity\n\n- input-driven"
    )
    version = editor.replace(uri, text)
    assert await editor.diagnostics_of(uri, version) == []


async def _hover(editor: Editor, uri: str, prefix: str, character: int) -> str:
    line = next(
        i for i, text in enumerate(editor.texts[uri].split("\n")) if text.startswith(prefix)
    )
    result = await editor.text_document_hover_async(
        lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line=line, character=character),
        )
    )
    assert result is not None and isinstance(result.contents, lsp.MarkupContent)
    return result.contents.value


async def test_declare_no_tools_action(editor: Editor, project: Path) -> None:
    uri = editor.open(project / "src" / "outreach.prose.md")
    found = await editor.diagnostics_of(uri, 1)
    (declare,) = [
        a
        for a in await _actions(editor, uri, found[0])
        if a.kind == lsp.CodeActionKind.RefactorRewrite
    ]
    version = editor.edit(uri, _edits_for(declare, uri))
    found = await editor.diagnostics_of(uri, version)
    assert editor.texts[uri].endswith("without new evidence.\n\n### Tools\n\n(none)\n")
    symbols = await editor.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    assert symbols is not None and isinstance(symbols[0], lsp.DocumentSymbol)
    assert [s.name for s in symbols[0].children or []][-1] == "Tools"
    # asking only for quick fixes leaves the rewrite out
    result = await editor.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=found[0].range,
            context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.QuickFix]),
        )
    )
    assert result and all(
        isinstance(a, lsp.CodeAction) and a.kind == lsp.CodeActionKind.QuickFix for a in result
    )
    # accounts already declares its tools: nothing to offer there
    other = editor.open(project / "src" / "accounts.prose.md")
    await editor.diagnostics_of(other, 1)
    result = await editor.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=other),
            range=lsp.Range(
                start=lsp.Position(line=8, character=0), end=lsp.Position(line=8, character=0)
            ),
            context=lsp.CodeActionContext(diagnostics=[]),
        )
    )
    assert not result


async def _complete(
    editor: Editor, uri: str, line: int, character: int
) -> list[lsp.CompletionItem]:
    result = await editor.text_document_completion_async(
        lsp.CompletionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line=line, character=character),
        )
    )
    assert isinstance(result, lsp.CompletionList)
    return list(result.items)


async def test_completion_of_sections_and_producers(editor: Editor, project: Path) -> None:
    uri = editor.open(project / "src" / "outreach.prose.md")
    await editor.diagnostics_of(uri, 1)
    text = editor.texts[uri]
    version = editor.replace(uri, text + "\n### To")
    await editor.diagnostics_of(uri, version)
    last = len(editor.texts[uri].split("\n")) - 1
    items = await _complete(editor, uri, last, len("### To"))
    labels = [i.label for i in items]
    assert "Tools" in labels and "Maintains" not in labels  # Maintains is already there
    assert "Receives" not in labels  # a gateway section
    tools = next(i for i in items if i.label == "Tools")
    assert isinstance(tools.text_edit, lsp.TextEdit)
    assert tools.text_edit.range.start == lsp.Position(line=last, character=4)

    lines = editor.texts[uri].split("\n")
    need = lines.index("- `summary`: the summary to open the note with")
    version = editor.edit(
        uri,
        [
            lsp.TextEdit(
                range=lsp.Range(
                    start=lsp.Position(line=need + 1, character=0),
                    end=lsp.Position(line=need + 1, character=0),
                ),
                new_text="- from `acc\n",
            )
        ],
    )
    await editor.diagnostics_of(uri, version)
    items = await _complete(editor, uri, need + 1, len("- from `acc"))
    labels = [i.label for i in items]
    assert {"accounts", "market", "signals", "accounts.summary", "signals.stargazers"} <= set(
        labels
    )
    assert "outreach" not in labels  # a node never subscribes to itself
    version = editor.edit(
        uri,
        [
            lsp.TextEdit(
                range=lsp.Range(
                    start=lsp.Position(line=need + 1, character=11),
                    end=lsp.Position(line=need + 1, character=11),
                ),
                new_text="ounts.",
            )
        ],
    )
    await editor.diagnostics_of(uri, version)
    items = await _complete(editor, uri, need + 1, len("- from `accounts."))
    assert [i.label for i in items] == ["enrichment", "summary"]


async def test_unknown_requests_get_method_not_found(editor: Editor) -> None:
    with pytest.raises(JsonRpcMethodNotFound):
        await editor.protocol.send_request_async("prosec/noSuchRequest", {})
    # and the server keeps serving
    result = await editor.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="acc"))
    assert result is not None and "accounts" in [s.name for s in result]


async def test_broken_files_do_not_take_the_server_down(editor: Editor, project: Path) -> None:
    broken = project / "src" / "broken.prose.md"
    uri = editor.open(broken, "---\nname: [unclosed\nkind: responsibility\n```prose\nloop:\n")
    found = await editor.diagnostics_of(uri, 1)
    assert "frontmatter_unterminated" in {d.code for d in found} or "frontmatter_invalid" in {
        d.code for d in found
    }
    for text in ("", "\x00\x01\ufffd", "## \n### \n#### \n- ``: \n"):
        version = editor.replace(uri, text)
        await editor.diagnostics_of(uri, version)
        await editor.text_document_hover_async(
            lsp.HoverParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri),
                position=lsp.Position(line=0, character=0),
            )
        )
        await _complete(editor, uri, 0, 0)
    result = await editor.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="market"))
    assert result is not None and "market" in [s.name for s in result]


async def test_other_markdown_files_are_left_alone(editor: Editor, project: Path) -> None:
    readme = project / "README.md"
    readme.write_text("# Notes\n\n### Requires\n\nNothing here is a contract.\n", encoding="utf-8")
    other = editor.open(readme)
    uri = editor.open(project / "src" / "accounts.prose.md")
    await editor.diagnostics_of(uri, 1)
    assert all(p.uri != other for _, p in editor.published)
    result = await editor.text_document_hover_async(
        lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=other),
            position=lsp.Position(line=2, character=5),
        )
    )
    assert result is None


async def test_saving_republishes_from_disk(editor: Editor, project: Path) -> None:
    path = project / "src" / "accounts.prose.md"
    uri = editor.open(path)
    assert await editor.diagnostics_of(uri, 1) == []
    text = editor.texts[uri].replace("### Tools", "### Memory")
    version = editor.replace(uri, text)
    found = await editor.diagnostics_of(uri, version)
    assert [str(d.code) for d in found] == ["section_retired"]
    path.write_text(text, encoding="utf-8")
    mark = len(editor.published)
    editor.text_document_did_save(
        lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    found = await editor.diagnostics_of(uri, version, after=mark)
    assert [str(d.code) for d in found] == ["section_retired"]
