"""`prosec lsp` end to end on the wiring: hover, definition, references, pins, live updates."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from ...conftest import CORPUS
from .client import Editor, apply_edit

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _line(editor: Editor, uri: str, prefix: str) -> int:
    return next(i for i, t in enumerate(editor.texts[uri].split("\n")) if t.startswith(prefix))


def _at(uri: str, line: int, character: int) -> tuple[lsp.TextDocumentIdentifier, lsp.Position]:
    return lsp.TextDocumentIdentifier(uri=uri), lsp.Position(line=line, character=character)


async def _hover(editor: Editor, uri: str, prefix: str, character: int = 3) -> str:
    document, position = _at(uri, _line(editor, uri, prefix), character)
    result = await editor.text_document_hover_async(
        lsp.HoverParams(text_document=document, position=position)
    )
    assert result is not None and isinstance(result.contents, lsp.MarkupContent)
    return result.contents.value


async def _open(editor: Editor, project: Path, name: str) -> str:
    uri = editor.open(project / "src" / f"{name}.prose.md")
    await editor.diagnostics_of(uri, 1)
    return uri


async def test_hover_tells_how_each_need_is_wired(editor: Editor, project: Path) -> None:
    uri = await _open(editor, project, "outreach")
    wired = await _hover(editor, uri, "- `enrichment`")
    assert "Wired on the **named** rung" in wired and "`accounts` facet `enrichment`" in wired
    ambiguous = await _hover(editor, uri, "- `summary`")
    assert "**Ambiguous** on the **named** rung" in ambiguous
    assert "`accounts.summary`, `market.summary`" in ambiguous
    unsatisfied = await _hover(editor, uri, "- `weather-forecast`")
    assert "**Unsatisfied**: no rung matched" in unsatisfied
    requires = await _hover(editor, uri, "### Requires")
    assert "3 need(s): 1 ambiguous, 1 unsatisfied, 1 wired" in requires


async def test_hover_on_a_facet_lists_its_subscribers(editor: Editor, project: Path) -> None:
    uri = await _open(editor, project, "accounts")
    await _open(editor, project, "outreach")
    enrichment = await _hover(editor, uri, "#### enrichment", 6)
    assert (
        "Subscribed by:\n- `outreach` need `enrichment` → `enrichment` (rung **named**)"
        in enrichment
    )
    summary = await _hover(editor, uri, "#### summary", 6)
    assert "No node subscribes to it." in summary


async def test_definition_goes_from_a_need_to_the_producer_facet(
    editor: Editor, project: Path
) -> None:
    uri = await _open(editor, project, "outreach")
    document, position = _at(uri, _line(editor, uri, "- `enrichment`"), 5)
    result = await editor.text_document_definition_async(
        lsp.DefinitionParams(text_document=document, position=position)
    )
    assert isinstance(result, list)
    (target,) = result
    assert isinstance(target, lsp.Location)
    accounts = (project / "src" / "accounts.prose.md").read_text("utf-8").split("\n")
    assert target.uri == (project / "src" / "accounts.prose.md").as_uri()
    line = accounts.index("#### enrichment")
    assert target.range == lsp.Range(
        start=lsp.Position(line=line, character=0), end=lsp.Position(line=line, character=15)
    )
    # an ambiguous need offers every candidate
    document, position = _at(uri, _line(editor, uri, "- `summary`"), 5)
    result = await editor.text_document_definition_async(
        lsp.DefinitionParams(text_document=document, position=position)
    )
    assert isinstance(result, list)
    assert sorted(Path(loc.uri).name for loc in result if isinstance(loc, lsp.Location)) == [
        "accounts.prose.md",
        "market.prose.md",
    ]


async def test_references_go_from_a_facet_to_its_subscribers(editor: Editor, project: Path) -> None:
    uri = await _open(editor, project, "accounts")
    document, position = _at(uri, _line(editor, uri, "#### enrichment"), 7)
    result = await editor.text_document_references_async(
        lsp.ReferenceParams(
            text_document=document,
            position=position,
            context=lsp.ReferenceContext(include_declaration=True),
        )
    )
    assert result is not None
    where = [(Path(loc.uri).name, loc.range.start.line) for loc in result]
    outreach = (project / "src" / "outreach.prose.md").read_text("utf-8").split("\n")
    need = next(i for i, t in enumerate(outreach) if t.startswith("- `enrichment`"))
    assert where == [
        ("accounts.prose.md", _line(editor, uri, "#### enrichment")),
        ("outreach.prose.md", need),
    ]
    (reference,) = [loc for loc in result if loc.uri.endswith("outreach.prose.md")]
    assert (reference.range.start.character, reference.range.end.character) == (3, 13)


async def test_a_pin_in_prose_toml_settles_an_ambiguous_need(editor: Editor, project: Path) -> None:
    uri = await _open(editor, project, "outreach")
    ambiguous = next(d for d in editor.diagnostics[uri] if d.code == "wiring_ambiguous")
    actions = await editor.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=ambiguous.range,
            context=lsp.CodeActionContext(diagnostics=[ambiguous]),
        )
    )
    (pin,) = [
        a
        for a in actions or []
        if isinstance(a, lsp.CodeAction) and a.title.startswith("Pin to `accounts")
    ]
    assert pin.edit is not None and pin.edit.document_changes is not None
    (change,) = pin.edit.document_changes
    toml = project / "prose.toml"
    assert isinstance(change, lsp.TextDocumentEdit) and change.text_document.uri == toml.as_uri()
    text = toml.read_text("utf-8")
    for edit in change.edits:
        assert isinstance(edit, lsp.TextEdit)
        text = apply_edit(text, edit)
    assert tomllib.loads(text)["wiring"]["pin"] == [
        {"subscriber": "outreach", "need": "summary", "producer": "accounts", "facet": "summary"}
    ]
    toml.write_text(text, encoding="utf-8")  # what saving the edited prose.toml does
    mark = len(editor.published)
    editor.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(
            changes=[lsp.FileEvent(uri=toml.as_uri(), type=lsp.FileChangeType.Changed)]
        )
    )
    found = await editor.diagnostics_of(uri, 1, after=mark)
    assert sorted(str(d.code) for d in found if str(d.code).startswith("wiring")) == [
        "wiring_unsatisfied"
    ]
    pinned = await _hover(editor, uri, "- `summary`")
    assert "Wired on the **pinned** rung" in pinned


async def test_pinning_creates_prose_toml_when_missing(editor: Editor, project: Path) -> None:
    (project / "prose.toml").unlink()
    uri = await _open(editor, project, "outreach")
    version = editor.replace(uri, editor.texts[uri].replace("`weather-forecast`", "`market-news`"))
    found = await editor.diagnostics_of(uri, version)
    unsatisfied = next(d for d in found if d.code == "wiring_unsatisfied")
    actions = await editor.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=unsatisfied.range,
            context=lsp.CodeActionContext(diagnostics=[unsatisfied]),
        )
    )
    (pin,) = [
        a for a in actions or [] if isinstance(a, lsp.CodeAction) and a.title.startswith("Pin")
    ]
    assert pin.title == "Pin to `market.@atomic` in prose.toml"
    assert pin.edit is not None and pin.edit.document_changes is not None
    create, edit = pin.edit.document_changes
    assert isinstance(create, lsp.CreateFile) and create.uri == (project / "prose.toml").as_uri()
    assert isinstance(edit, lsp.TextDocumentEdit)


async def test_other_files_changing_rewire_the_open_file(editor: Editor, project: Path) -> None:
    outreach = await _open(editor, project, "outreach")
    accounts = await _open(editor, project, "accounts")
    mark = len(editor.published)
    # renaming a facet in one buffer resolves the ambiguity in another
    editor.replace(accounts, editor.texts[accounts].replace("#### summary", "#### overview"))
    found = await editor.diagnostics_of(outreach, 1, after=mark)
    assert "wiring_ambiguous" not in {d.code for d in found}
    wired = await _hover(editor, outreach, "- `summary`")
    assert "`market` facet `summary`" in wired
    # a new producer saved on disk makes the unsatisfied need wired
    weather = project / "src" / "weather.prose.md"
    weather.write_text(
        "---\nname: weather\nkind: gateway\n---\n\n### Maintains\n\n#### weather-forecast\n"
        "Tomorrow's forecast.\n\n- `city`: where\n\n### Continuity\n\n- external-driven\n",
        encoding="utf-8",
    )
    mark = len(editor.published)
    editor.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(
            changes=[lsp.FileEvent(uri=weather.as_uri(), type=lsp.FileChangeType.Created)]
        )
    )
    found = await editor.diagnostics_of(outreach, 1, after=mark)
    assert not {str(d.code) for d in found} & {"wiring_ambiguous", "wiring_unsatisfied"}


async def test_cycles_are_reported_on_the_open_file(editor: Editor, project: Path) -> None:
    uri = await _open(editor, project, "accounts")
    signals = project / "src" / "signals.prose.md"
    text = signals.read_text("utf-8").replace(
        "### Maintains",
        "### Requires\n\n- `enrichment`: what we know about each company\n\n### Maintains",
    )
    other = editor.open(signals, text.replace("kind: gateway", "kind: responsibility"))
    found = await editor.diagnostics_of(other, 1)
    everywhere = found + list(editor.diagnostics.get(uri, []))
    assert "wiring_cycle" in {d.code for d in everywhere}


async def test_a_corpus_program_as_the_build_sees_it(editor: Editor) -> None:
    """corpus/wiring-unsatisfied, opened in place (nothing is written)."""
    path = CORPUS / "wiring-unsatisfied" / "src" / "budget-review.prose.md"
    uri = editor.open(path)
    (found,) = await editor.diagnostics_of(uri, 1)
    lines = path.read_text("utf-8").split("\n")
    line = next(i for i, t in enumerate(lines) if t.startswith("- `headcount-plan`"))
    assert found.code == "wiring_unsatisfied"
    assert found.range == lsp.Range(
        start=lsp.Position(line=line, character=0),
        end=lsp.Position(line=line, character=len(lines[line])),
    )
    wired = await _hover(editor, uri, "- `spend`")
    assert "Wired on the **named** rung" in wired and "`spend-ledger` facet `@atomic`" in wired
    document, position = _at(uri, _line(editor, uri, "- `spend`"), 4)
    result = await editor.text_document_definition_async(
        lsp.DefinitionParams(text_document=document, position=position)
    )
    assert isinstance(result, list) and len(result) == 1
    assert isinstance(result[0], lsp.Location)
    assert result[0].uri.endswith("corpus/wiring-unsatisfied/src/spend-ledger.prose.md")
