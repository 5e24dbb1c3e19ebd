"""Feature values → lsprotocol types (with server.py, the only user of lsprotocol)."""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types as lsp

from ..diagnostics import Diagnostic, Severity
from .actions import Action, FileChange
from .completion import Completion
from .navigation import Symbol
from .positions import LineIndex, Position, Range

SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.INFO: lsp.DiagnosticSeverity.Information,
}
SYMBOL_KIND = {
    "responsibility": lsp.SymbolKind.Class,
    "gateway": lsp.SymbolKind.Interface,
    "function": lsp.SymbolKind.Function,
    "pattern": lsp.SymbolKind.Struct,
    "test": lsp.SymbolKind.Method,
    "section": lsp.SymbolKind.Namespace,
    "facet": lsp.SymbolKind.Field,
    "need": lsp.SymbolKind.Property,
}
COMPLETION_KIND = {
    "section": lsp.CompletionItemKind.Keyword,
    "producer": lsp.CompletionItemKind.Module,
    "facet": lsp.CompletionItemKind.Field,
}


def position(value: Position) -> lsp.Position:
    return lsp.Position(line=value.line, character=value.character)


def range_(value: Range) -> lsp.Range:
    return lsp.Range(start=position(value.start), end=position(value.end))


def diagnostic(item: Diagnostic, index: LineIndex) -> lsp.Diagnostic:
    return lsp.Diagnostic(
        range=range_(index.range(item.span)),
        message=item.message,
        severity=SEVERITY[item.severity],
        code=item.code,
        source="prosec",
    )


def markdown(text: str) -> lsp.MarkupContent:
    return lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text)


def document_symbol(symbol: Symbol, index: LineIndex) -> lsp.DocumentSymbol:
    return lsp.DocumentSymbol(
        name=symbol.name or "(unnamed)",
        kind=SYMBOL_KIND.get(symbol.kind, lsp.SymbolKind.Object),
        detail=symbol.detail or None,
        range=range_(index.range(symbol.span)),
        selection_range=range_(index.range(symbol.selection)),
        children=[document_symbol(child, index) for child in symbol.children],
    )


def completion(item: Completion, index: LineIndex) -> lsp.CompletionItem:
    return lsp.CompletionItem(
        label=item.label,
        kind=COMPLETION_KIND.get(item.kind),
        detail=item.detail,
        documentation=markdown(item.documentation),
        sort_text=item.sort_text,
        text_edit=lsp.TextEdit(range=range_(index.range(item.replace)), new_text=item.new_text),
    )


def code_action(
    action: Action,
    uri_of: Callable[[FileChange], str],
    version_of: Callable[[FileChange], int | None],
    diagnostic_index: LineIndex,
    document_changes: bool,
) -> lsp.CodeAction:
    """One action; `document_changes` says whether the client takes versioned edits and
    file creation (else a plain `changes` map, and creating files is impossible)."""
    if document_changes:
        steps: list[lsp.TextDocumentEdit | lsp.CreateFile | lsp.RenameFile | lsp.DeleteFile] = []
        for change in action.changes:
            uri = uri_of(change)
            if change.create:
                steps.append(
                    lsp.CreateFile(uri=uri, options=lsp.CreateFileOptions(ignore_if_exists=True))
                )
            steps.append(
                lsp.TextDocumentEdit(
                    text_document=lsp.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=None if change.create else version_of(change)
                    ),
                    edits=[_versioned_edit(r, t) for r, t in change.edits],
                )
            )
        edit = lsp.WorkspaceEdit(document_changes=steps)
    else:
        edit = lsp.WorkspaceEdit(
            changes={
                uri_of(c): [lsp.TextEdit(range=range_(r), new_text=t) for r, t in c.edits]
                for c in action.changes
            }
        )
    found = action.diagnostic
    return lsp.CodeAction(
        title=action.title,
        kind=action.kind,
        diagnostics=[diagnostic(found, diagnostic_index)] if found is not None else None,
        edit=edit,
        is_preferred=action.preferred or None,
    )


def _versioned_edit(
    where: Range, text: str
) -> lsp.TextEdit | lsp.AnnotatedTextEdit | lsp.SnippetTextEdit:
    return lsp.TextEdit(range=range_(where), new_text=text)
