"""`prosec lsp` answers `initialize` before it loads pygls (compiler/lsp/early.py): the
answer is the one pygls computes for the same client, it is sent exactly once, and the
server then knows the client as if pygls had answered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from prosec.compiler.lsp.early import capabilities, initialize_reply
from prosec.compiler.lsp.server import build

from .raw import RawServer, notification, request

CLIENTS: list[dict[str, Any]] = [
    {},
    {"general": {"positionEncodings": ["utf-8", "utf-16"]}},
    {"general": {"positionEncodings": ["utf-32"]}},
    {"general": {"positionEncodings": ["latin-1"]}},
    {"textDocument": {"synchronization": {"willSave": True, "willSaveWaitUntil": True}}},
    {"notebookDocument": {"synchronization": {}}},
    {"textDocument": {"rename": {"prepareSupport": True}}},
    {"workspace": {"fileOperations": {"didCreate": True, "willRename": True}}},
]


def _pygls_answer(client: dict[str, Any]) -> dict[str, Any]:
    """What pygls's own `initialize` returns for prosec's server and this client."""
    server = build()
    protocol = server.protocol
    params = protocol._converter.structure(
        {"processId": None, "rootUri": None, "capabilities": client}, lsp.InitializeParams
    )
    steps = protocol.lsp_initialize(params)
    try:
        while True:
            handler, args, _ = next(steps)
            handler(*args)
    except StopIteration as done:
        result = done.value
    answer: dict[str, Any] = protocol._converter.unstructure(result)
    return answer


@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: json.dumps(c)[:40])
def test_the_early_answer_is_the_one_pygls_computes(client: dict[str, Any]) -> None:
    ours = initialize_reply(
        json.dumps(request(7, "initialize", {"processId": None, "capabilities": client})).encode()
    )
    assert ours is not None
    msg_id, data = ours
    header, body = data.split(b"\r\n\r\n", 1)
    assert msg_id == 7 and header == b"Content-Length: %d" % len(body)
    reply = json.loads(body)
    assert reply["id"] == 7 and reply["jsonrpc"] == "2.0"
    assert reply["result"] == _pygls_answer(client)
    assert capabilities(client) == reply["result"]["capabilities"]


@pytest.mark.parametrize(
    "message",
    [
        request(1, "shutdown"),
        request(1, "initialize"),  # no params
        {"jsonrpc": "2.0", "id": True, "method": "initialize", "params": {}},
        notification("initialize", {}),
        [1, 2],
    ],
)
def test_anything_else_is_left_to_the_server(message: Any) -> None:
    assert initialize_reply(json.dumps(message).encode()) is None
    assert initialize_reply(b"{not json") is None


def test_the_server_answers_initialize_once_and_knows_the_client(tmp_path: Path) -> None:
    (tmp_path / "a.prose.md").write_text("---\nname: a\nkind: function\n---\n\n# a\n")
    server = RawServer("--debounce-ms", "0")
    try:
        params = {
            "processId": None,
            "rootUri": tmp_path.as_uri(),
            "capabilities": {"general": {"positionEncodings": ["utf-8"]}},
        }
        server.send(request(1, "initialize", params))
        reply = server.reply(1)
        assert reply["result"]["capabilities"]["positionEncoding"] == "utf-8"
        server.send(notification("initialized", {}))
        # the server works as usual after it: a request gets its own answer
        server.send(request(2, "workspace/symbol", {"query": ""}))
        assert "result" in server.reply(2)
        assert server.close() == 0
        replies = [m for _, m in server.received if m.get("id") == 1 and "method" not in m]
        assert len(replies) == 1  # pygls's own reply to the same request was dropped
    finally:
        if server.process.poll() is None:
            server.process.kill()
