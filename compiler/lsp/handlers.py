"""The request handlers: LSP params → a pure feature module → lsprotocol results."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from ..ir import Span
from . import actions, completion, convert, hover, navigation
from .disk import read_config_text
from .positions import Position
from .workspace import Analysis

if TYPE_CHECKING:
    from .server import ProseServer

TRIGGER_CHARACTERS = ["#", "`", "."]


def _on_hover(ls: ProseServer, params: lsp.HoverParams) -> lsp.Hover | None:
    found = ls.analysis_at(params.text_document.uri)
    if found is None:
        return None
    analysis, display, index = found
    result = hover.hover(analysis, display, *index.point(_position(params.position)))
    if result is None:
        return None
    return lsp.Hover(
        contents=convert.markdown(result.markdown),
        range=convert.range_(index.range(result.span)),
    )


def _on_definition(ls: ProseServer, params: lsp.DefinitionParams) -> list[lsp.Location]:
    found = ls.analysis_at(params.text_document.uri)
    if found is None:
        return []
    analysis, display, index = found
    spans = navigation.definition(analysis, display, *index.point(_position(params.position)))
    return _locations(ls, analysis, spans)


def _on_references(ls: ProseServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
    found = ls.analysis_at(params.text_document.uri)
    if found is None:
        return []
    analysis, display, index = found
    line, column = index.point(_position(params.position))
    spans = navigation.references(
        analysis, display, line, column, params.context.include_declaration
    )
    return _locations(ls, analysis, spans)


def _on_document_symbol(
    ls: ProseServer, params: lsp.DocumentSymbolParams
) -> list[lsp.DocumentSymbol]:
    found = ls.analysis_at(params.text_document.uri)
    if found is None:
        return []
    analysis, display, index = found
    source = analysis.source(display)
    if source is None:
        return []
    return [convert.document_symbol(s, index) for s in navigation.document_symbols(source)]


def _on_workspace_symbol(
    ls: ProseServer, params: lsp.WorkspaceSymbolParams
) -> list[lsp.WorkspaceSymbol]:
    analyses = [ls.model.analysis(root) for root in ls.model.folder_roots()]
    result = []
    for analysis, symbol in navigation.workspace_symbols(analyses, params.query):
        index = analysis.index(symbol.span.path, ls.encoding)
        where = lsp.Location(
            uri=ls.uri_of(analysis.locate(symbol.span)),
            range=convert.range_(index.range(symbol.span)),
        )
        result.append(
            lsp.WorkspaceSymbol(
                name=symbol.name,
                kind=convert.SYMBOL_KIND.get(symbol.kind, lsp.SymbolKind.Object),
                location=where,
                container_name=symbol.span.path,
            )
        )
    return result


def _on_code_action(ls: ProseServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    found = ls.analysis_at(params.text_document.uri)
    if found is None:
        return []
    analysis, display, index = found
    request = actions.Request(
        display=display,
        start=index.point(_position(params.range.start)),
        end=index.point(_position(params.range.end)),
        encoding=ls.encoding,
        toml_text=read_config_text(analysis.root),
    )
    wanted = [str(getattr(kind, "value", kind)) for kind in params.context.only or []]
    document_changes = _document_changes(ls)
    result = []
    for action in actions.code_actions(analysis, request):
        if wanted and not any(action.kind.startswith(kind) for kind in wanted):
            continue
        if any(change.create for change in action.changes) and not document_changes:
            continue  # the client cannot create prose.toml
        result.append(
            convert.code_action(
                action,
                lambda change: ls.uri_of(change.path),
                lambda change: ls.model.version(change.path),
                index,
                document_changes,
            )
        )
    return result


def _on_completion(ls: ProseServer, params: lsp.CompletionParams) -> lsp.CompletionList:
    found = ls.analysis_at(params.text_document.uri)
    items: list[lsp.CompletionItem] = []
    if found is not None:
        analysis, display, index = found
        line, column = index.point(_position(params.position))
        items = [
            convert.completion(item, index)
            for item in completion.complete(analysis, display, line, column)
        ]
    return lsp.CompletionList(is_incomplete=False, items=items)


def _position(value: lsp.Position) -> Position:
    return Position(value.line, value.character)


def _locations(ls: ProseServer, analysis: Analysis, spans: list[Span]) -> list[lsp.Location]:
    result = []
    for span in spans:
        index = analysis.index(span.path, ls.encoding)
        result.append(
            lsp.Location(
                uri=ls.uri_of(analysis.locate(span)), range=convert.range_(index.range(span))
            )
        )
    return result


def _document_changes(ls: ProseServer) -> bool:
    workspace = ls.client_capabilities.workspace
    edit = workspace.workspace_edit if workspace else None
    if edit is None or not edit.document_changes:
        return False
    return lsp.ResourceOperationKind.Create in (edit.resource_operations or [])


# every request the server answers, with its registration options
REQUESTS: tuple[tuple[str, Callable[..., Any], Any], ...] = (
    (lsp.TEXT_DOCUMENT_HOVER, _on_hover, None),
    (lsp.TEXT_DOCUMENT_DEFINITION, _on_definition, None),
    (lsp.TEXT_DOCUMENT_REFERENCES, _on_references, None),
    (lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL, _on_document_symbol, None),
    (lsp.WORKSPACE_SYMBOL, _on_workspace_symbol, None),
    (
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        _on_code_action,
        lsp.CodeActionOptions(
            code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.RefactorRewrite]
        ),
    ),
    (
        lsp.TEXT_DOCUMENT_COMPLETION,
        _on_completion,
        lsp.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS),
    ),
)
