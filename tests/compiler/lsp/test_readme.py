"""The README's editor snippets and capability table, checked against the real server."""

from __future__ import annotations

import json
import re
import tomllib

import pytest
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, client_capabilities

from ...conftest import REPO, prosec_bin
from .client import Editor, make_editor

FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("## Editor integration (LSP)")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def _blocks(language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(_section()) if lang == language]


def test_every_snippet_starts_prosec_lsp() -> None:
    (package,) = _blocks("json")
    assert "vscode-languageclient" in json.loads(package)["dependencies"]
    (extension,) = _blocks("js")
    assert 'command: "prosec", args: ["lsp"]' in extension
    assert 'pattern: "**/*.prose.md"' in extension
    lua = _blocks("lua")
    assert len(lua) == 2
    for block in lua:
        assert 'cmd = { "prosec", "lsp" }' in block
        assert '"prose.toml", "prose.lock"' in block
    assert 'match("%.prose%.md$")' in lua[0]
    (helix,) = _blocks("toml")
    config = tomllib.loads(helix)
    assert config["language-server"]["prosec"] == {"command": "prosec", "args": ["lsp"]}
    assert "prosec" in config["language"][0]["language-servers"]


def _advertised(capabilities: lsp.ServerCapabilities) -> set[str]:
    names = set()
    for field in (
        "text_document_sync",
        "position_encoding",
        "hover_provider",
        "definition_provider",
        "references_provider",
        "document_symbol_provider",
        "workspace_symbol_provider",
        "code_action_provider",
        "completion_provider",
    ):
        if getattr(capabilities, field):
            head, *rest = field.split("_")
            names.add(head + "".join(part.title() for part in rest))
    return names


@pytest.mark.asyncio
async def test_the_capability_table_is_what_the_server_advertises() -> None:
    (helix,) = _blocks("toml")
    args = tomllib.loads(helix)["language-server"]["prosec"]["args"]
    client = await ClientServerConfig(
        server_command=[prosec_bin(), *args, "--stdio"], client_factory=make_editor
    ).start()
    assert isinstance(client, Editor)
    try:
        result = await client.initialize_session(
            lsp.InitializeParams(capabilities=client_capabilities("neovim"))
        )
        await client.shutdown_session()
    finally:
        await client.stop()
    table = set(re.findall(r"^\| `(\w+)`", _section(), re.MULTILINE))
    assert table == _advertised(result.capabilities)
    options = result.capabilities.code_action_provider
    assert isinstance(options, lsp.CodeActionOptions)
    assert {str(k) for k in options.code_action_kinds or []} == {"quickfix", "refactor.rewrite"}
    assert "`quickfix`, `refactor.rewrite`" in _section()
