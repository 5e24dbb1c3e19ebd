"""Answer `initialize` before pygls and lsprotocol are imported.

An editor waits for the reply to `initialize` before it sends anything else, and importing
pygls and lsprotocol (a module of several hundred attrs classes) takes most of a second.
So `prosec lsp` reads the first frame itself, with the standard library only: when it is
an `initialize` request, it answers with the capabilities pygls would compute (the same
value: `CAPABILITIES`, kept equal to pygls's answer by tests/compiler/lsp/test_early.py),
and only then imports the server. The server handles that same request as usual, to
learn the client's capabilities, and its own reply to it is dropped (`answered`). Any
other first frame is left to the server untouched.

A request whose params pygls would refuse as malformed is answered here all the same
(the server only logs the problem): the client has a reply either way.
"""

from __future__ import annotations

import json
import os
import select
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from .framing import READ, Frame, Framer

# what pygls's ServerCapabilitiesBuilder gives for prosec's features (positionEncoding
# and the textDocumentSync will-save flags depend on the client: see `capabilities`)
CAPABILITIES: dict[str, Any] = {
    "codeActionProvider": {"codeActionKinds": ["quickfix", "refactor.rewrite"]},
    "completionProvider": {"triggerCharacters": ["#", "`", "."]},
    "definitionProvider": True,
    "documentSymbolProvider": True,
    "executeCommandProvider": {"commands": []},
    "hoverProvider": True,
    "referencesProvider": True,
    "textDocumentSync": {"change": 2, "openClose": True, "save": True},
    "workspace": {
        "fileOperations": {},
        "workspaceFolders": {"changeNotifications": True, "supported": True},
    },
    "workspaceSymbolProvider": {"resolveProvider": False},
}
_ENCODINGS = ("utf-8", "utf-16", "utf-32")
_IDLE = 0.05  # seconds, as in `stream`


@dataclass
class Early:
    """What was read before the server started: the framer (with any bytes after the
    first frame), the first frames, and the id of the request already answered."""

    framer: Framer
    frames: list[Frame] = field(default_factory=list)
    answered: int | str | None = None
    ended: bool = False  # stdin reached its end


PENDING: Early | None = None  # what `cli.main` read before click loaded, for the command


def take_pending() -> Early | None:
    global PENDING
    found, PENDING = PENDING, None
    return found


def capabilities(client: Any) -> dict[str, Any]:
    """The server's capabilities for a client's `capabilities` object (plain JSON)."""
    found: dict[str, Any] = json.loads(json.dumps(CAPABILITIES))
    general = _get(client, "general")
    encodings = _get(general, "positionEncodings")
    chosen = "utf-16"
    if isinstance(encodings, list):
        chosen = next((e for e in encodings if e in _ENCODINGS), chosen)
    found["positionEncoding"] = chosen
    sync = _get(_get(client, "textDocument"), "synchronization")
    for flag in ("willSave", "willSaveWaitUntil"):
        if _get(sync, flag):  # the client can; prosec does not
            found["textDocumentSync"][flag] = False
    return found


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def initialize_reply(body: bytes) -> tuple[int | str, bytes] | None:
    """The id of an `initialize` request and the framed reply to it; None for anything
    else (the server handles it as it comes)."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    msg_id, params = message.get("id"), message.get("params")
    if message.get("method") != "initialize" or not isinstance(params, dict):
        return None
    if isinstance(msg_id, bool) or not isinstance(msg_id, int | str):
        return None
    result = {
        "capabilities": capabilities(params.get("capabilities")),
        "serverInfo": {"name": "prosec", "version": __version__},
    }
    reply = json.dumps({"id": msg_id, "jsonrpc": "2.0", "result": result}).encode()
    return msg_id, b"Content-Length: %d\r\n\r\n" % len(reply) + reply


def _readable(fd: int, timeout: float) -> bool:
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    except (OSError, ValueError):  # not a selectable file: read (and block) as pygls would
        return True


def answer_initialize(stdin_fd: int, stdout_fd: int) -> Early:
    """Read stdin until its first frame; answer it on stdout when it is `initialize`."""
    framer = Framer()
    early = Early(framer=framer)
    idle = False
    while True:
        frame = framer.next_frame(idle=idle)
        if frame is not None:
            early.frames.append(frame)
            break
        if not _readable(stdin_fd, _IDLE):
            idle = True  # as `stream.serve_stdin`: a pause lets a short body be taken
            continue
        idle = False
        try:
            data = os.read(stdin_fd, READ)
        except OSError:
            data = b""
        if not data:
            early.ended = True
            return early
        framer.feed(data)
    reply = initialize_reply(early.frames[0].body)
    if reply is not None:
        early.answered, data = reply
        while data:
            data = data[os.write(stdout_fd, data) :]
    return early
