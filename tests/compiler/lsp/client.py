"""A real LSP client (pytest-lsp) that drives the real `prosec lsp` process over stdio."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from ...conftest import prosec_bin

EDITOR_PROJECT = Path(__file__).parent / "fixtures" / "editor"


class Editor(LanguageClient):
    """The pytest-lsp client plus a log of every publishDiagnostics with its arrival time."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.published: list[tuple[float, lsp.PublishDiagnosticsParams]] = []
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.registrations: list[lsp.Registration] = []

    def open(self, path: Path, text: str | None = None) -> str:
        uri = path.resolve().as_uri()
        self.texts[uri] = path.read_text(encoding="utf-8") if text is None else text
        self.versions[uri] = 1
        self.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(
                    uri=uri, language_id="markdown", version=1, text=self.texts[uri]
                )
            )
        )
        return uri

    def replace(self, uri: str, text: str) -> int:
        """Send the whole new text as one change; returns the new version."""
        self.texts[uri] = text
        self.versions[uri] += 1
        self.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(
                    uri=uri, version=self.versions[uri]
                ),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return self.versions[uri]

    def edit(self, uri: str, edits: list[lsp.TextEdit]) -> int:
        """Apply edits locally, then send them as incremental changes (last first)."""
        ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))
        changes = []
        text = self.texts[uri]
        for item in reversed(ordered):
            text = apply_edit(text, item)
            changes.append(
                lsp.TextDocumentContentChangePartial(range=item.range, text=item.new_text)
            )
        self.texts[uri] = text
        self.versions[uri] += 1
        self.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(
                    uri=uri, version=self.versions[uri]
                ),
                content_changes=changes,
            )
        )
        return self.versions[uri]

    async def diagnostics_of(
        self, uri: str, version: int | None = None, *, after: int = 0, timeout: float = 15
    ) -> list[lsp.Diagnostic]:
        """The first diagnostics published for `uri` (at `version`) from entry `after` on."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for _, params in self.published[after:]:
                if params.uri == uri and (version is None or params.version == version):
                    return list(params.diagnostics)
            await asyncio.sleep(0.002)
        raise AssertionError(f"no diagnostics for {uri} (version {version}) within {timeout}s")


def _record(client: Editor, params: lsp.PublishDiagnosticsParams) -> None:
    client.published.append((time.perf_counter(), params))
    client.diagnostics[params.uri] = params.diagnostics


def _register(client: Editor, params: lsp.RegistrationParams) -> None:
    client.registrations.extend(params.registrations)


def make_editor() -> Editor:
    client = Editor()
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = _record
    features[lsp.CLIENT_REGISTER_CAPABILITY] = _register
    register_lsp_features(client, features)
    return client


def server_config(*args: str) -> ClientServerConfig:
    return ClientServerConfig(
        server_command=[prosec_bin(), "lsp", *args], client_factory=make_editor
    )


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def offset(text: str, position: lsp.Position) -> int:
    """A UTF-16 LSP position → index into `text`."""
    lines = text.split("\n")
    start = sum(len(line) + 1 for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    units = 0
    for index, ch in enumerate(line):
        if units >= position.character:
            return start + index
        units += 2 if ord(ch) > 0xFFFF else 1
    return start + len(line)


def apply_edit(text: str, edit: lsp.TextEdit) -> str:
    return (
        text[: offset(text, edit.range.start)]
        + edit.new_text
        + text[offset(text, edit.range.end) :]
    )


async def start(client: Editor, root: Path) -> lsp.InitializeResult:
    return await client.initialize_session(
        lsp.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        )
    )
