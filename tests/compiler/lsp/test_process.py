"""`prosec lsp` as a whole process: start-up, debouncing, folders, prose.toml, exit."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp

from .client import Editor, server_config, start

pytestmark = pytest.mark.asyncio


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: Editor) -> AsyncIterator[None]:
    """A server with the default settings (debounced), initialized by each test."""
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=server_config())
async def bare(lsp_client: Editor) -> AsyncIterator[None]:
    """A server the test shuts down itself."""
    yield


async def test_capabilities_and_file_watching(client: Editor, project: Path) -> None:
    result = await start(client, project)
    capabilities = result.capabilities
    assert capabilities.position_encoding == lsp.PositionEncodingKind.Utf16
    assert capabilities.hover_provider and capabilities.definition_provider
    assert capabilities.references_provider and capabilities.document_symbol_provider
    assert capabilities.workspace_symbol_provider and capabilities.code_action_provider
    assert capabilities.completion_provider is not None
    assert list(capabilities.completion_provider.trigger_characters or []) == ["#", "`", "."]
    assert isinstance(capabilities.text_document_sync, lsp.TextDocumentSyncOptions)
    assert capabilities.text_document_sync.change == lsp.TextDocumentSyncKind.Incremental
    for _ in range(500):
        if client.registrations:
            break
        await asyncio.sleep(0.01)
    (watch,) = client.registrations
    assert watch.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES


async def test_workspace_symbols_follow_the_folders(client: Editor, project: Path) -> None:
    await start(client, project)
    result = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=""))
    assert result is not None
    assert sorted(s.name for s in result) == ["accounts", "market", "outreach", "signals"]
    result = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="mkt"))
    assert result is not None and [s.name for s in result] == ["market"]
    (market,) = result
    assert isinstance(market.location, lsp.Location)
    assert market.location.uri == (project / "src" / "market.prose.md").as_uri()
    other = project.parent / "other"
    (other / "src").mkdir(parents=True)
    (other / "prose.toml").write_text("", encoding="utf-8")
    (other / "src" / "mailer.prose.md").write_text(
        "---\nname: mailer\nkind: function\n---\n\n### Returns\n\nA receipt.\n", encoding="utf-8"
    )
    folder = lsp.WorkspaceFolder(uri=other.as_uri(), name="other")
    client.workspace_did_change_workspace_folders(
        lsp.DidChangeWorkspaceFoldersParams(
            event=lsp.WorkspaceFoldersChangeEvent(added=[folder], removed=[])
        )
    )
    result = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="mail"))
    assert result is not None and [s.name for s in result] == ["mailer"]


async def test_changes_are_debounced(client: Editor, project: Path) -> None:
    await start(client, project)
    uri = client.open(project / "src" / "accounts.prose.md")
    assert await client.diagnostics_of(uri, 1) == []
    mark = len(client.published)
    text = client.texts[uri]
    for n in range(10):  # a burst of keystrokes, well inside the 25 ms window
        client.replace(uri, text + "x" * n)
    await client.diagnostics_of(uri, 11, after=mark)
    await asyncio.sleep(0.2)
    versions = [p.version for _, p in client.published[mark:] if p.uri == uri]
    assert versions[-1] == 11 and len(versions) < 10


async def test_prose_toml_changes_reach_open_files(client: Editor, project: Path) -> None:
    await start(client, project)
    uri = client.open(project / "src" / "outreach.prose.md")
    found = await client.diagnostics_of(uri, 1)
    assert "id_missing" in {d.code for d in found}
    toml = project / "prose.toml"
    toml.write_text('[lint]\nignore = ["id_missing", "wiring_*"]\n', encoding="utf-8")
    mark = len(client.published)
    client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(
            changes=[lsp.FileEvent(uri=toml.as_uri(), type=lsp.FileChangeType.Changed)]
        )
    )
    found = await client.diagnostics_of(uri, 1, after=mark)
    assert sorted(str(d.code) for d in found) == ["continuity_unclear", "section_retired"]
    # a broken prose.toml: a warning, the defaults, and the server goes on
    toml.write_text("[lint\nignore = ", encoding="utf-8")
    mark = len(client.published)
    client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(
            changes=[lsp.FileEvent(uri=toml.as_uri(), type=lsp.FileChangeType.Changed)]
        )
    )
    found = await client.diagnostics_of(uri, 1, after=mark)
    assert "id_missing" in {d.code for d in found}
    (message,) = client.messages
    assert message.type == lsp.MessageType.Warning and "invalid TOML" in message.message
    # and on prose.toml itself, where the editor shows it
    (problem,) = await client.diagnostics_of(toml.resolve().as_uri(), after=mark)
    assert (problem.code, problem.range.start.line) == ("config_invalid", 0)
    assert problem.severity == lsp.DiagnosticSeverity.Error


async def test_shutdown_and_exit(bare: Editor, project: Path) -> None:
    await start(bare, project)
    uri = bare.open(project / "src" / "accounts.prose.md")
    assert await bare.diagnostics_of(uri, 1) == []
    await bare.shutdown_session()
    server = bare._server
    assert server is not None and server.returncode == 0


async def test_utf8_positions_when_the_client_prefers_them(client: Editor, project: Path) -> None:
    capabilities = lsp.ClientCapabilities(
        general=lsp.GeneralClientCapabilities(
            position_encodings=[lsp.PositionEncodingKind.Utf8, lsp.PositionEncodingKind.Utf16]
        )
    )
    result = await client.initialize_session(
        lsp.InitializeParams(capabilities=capabilities, root_uri=project.as_uri())
    )
    assert result.capabilities.position_encoding == lsp.PositionEncodingKind.Utf8
    path = project / "src" / "outreach.prose.md"
    uri = client.open(path)
    found = await client.diagnostics_of(uri, 1)
    unclear = next(d for d in found if d.code == "continuity_unclear")
    line = path.read_text("utf-8").split("\n")[unclear.range.start.line]
    assert unclear.range.end.character == len(line.encode("utf-8")) == len(line) + 3


@pytest_lsp.fixture(config=server_config("--debounce-ms", "500"))
async def slow(lsp_client: Editor) -> AsyncIterator[None]:
    """A server with a long debounce, so the two edges can be told apart by the clock."""
    yield
    await lsp_client.shutdown_session()


async def test_a_change_after_a_pause_is_linted_at_once(slow: Editor, project: Path) -> None:
    await start(slow, project)
    uri = slow.open(project / "src" / "accounts.prose.md")
    await slow.diagnostics_of(uri, 1)
    await asyncio.sleep(0.6)  # a quiet spell longer than the debounce
    text = slow.texts[uri]
    sent = time.perf_counter()
    version = slow.replace(uri, text + "\n")
    await slow.diagnostics_of(uri, version)
    assert time.perf_counter() - sent < 0.45  # leading edge: no 500 ms wait
    mark = len(slow.published)
    sent = time.perf_counter()
    for n in range(3):  # a burst right after it waits for the trailing edge
        version = slow.replace(uri, text + "x" * (n + 1))
    await slow.diagnostics_of(uri, version, after=mark)
    assert time.perf_counter() - sent >= 0.5
    assert [p.version for _, p in slow.published[mark:] if p.uri == uri] == [version]
