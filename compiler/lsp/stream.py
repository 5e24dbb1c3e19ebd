"""The LSP base protocol on stdin: frames that survive a bad `Content-Length`, and JSON-RPC
errors for messages that cannot be handled.

pygls reads one header line at a time and trusts `Content-Length`; a single frame whose
length is wrong leaves it reading message bodies as headers, and every later message,
`shutdown` and `exit` included, is lost. `Framer` finds frames by searching for the next
`Content-Length:` header instead: a JSON body can never hold a raw CR LF, so the header
pattern cannot occur inside a valid message. A frame whose body runs into the next header
(its length was too large) or whose bytes stop arriving while its body already parses
(the client is waiting for an answer) is cut there; bytes between frames are skipped.
Each problem is reported once, with what was skipped.

`dispatch` then parses a body strictly and structures it the way pygls does; a request
whose params do not fit its method gets a -32602 InvalidParams reply (pygls would drop it
and leave the client waiting), one that is not JSON-RPC at all gets -32600 or -32700.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

from lsprotocol import types as lsp
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
)
from pygls.protocol import JsonRPCProtocol

from .early import Early
from .framing import MAX_BODY, READ, Frame, Framer

__all__ = ["MAX_BODY", "Frame", "Framer", "dispatch", "serve_stdin"]

log = logging.getLogger("prosec.lsp")

_READ = READ


# -- dispatching --------------------------------------------------------------------------


def dispatch(protocol: JsonRPCProtocol, body: bytes, report: Callable[[str], None]) -> None:
    """Handle one message body: structure it as pygls does and hand it over, or answer a
    request that cannot be handled with the JSON-RPC error that says why."""
    try:
        raw = json.loads(body)
    except (ValueError, RecursionError) as exc:
        report(f"a message is not JSON ({exc}); skipped")
        _reply(protocol, None, JsonRpcParseError(message=f"Parse Error: {exc}"))
        return
    if not isinstance(raw, dict) or raw.get("jsonrpc") != "2.0":
        report("a message is not a JSON-RPC 2.0 object; skipped")
        msg_id = raw.get("id") if isinstance(raw, dict) else None
        _reply(protocol, msg_id, JsonRpcInvalidRequest(message="Invalid Request"))
        return
    try:
        message = protocol.structure_message(raw)
    except JsonRpcException as exc:
        method = raw.get("method")
        report(f"{method or 'a message'}: malformed params ({exc.message}); skipped")
        if "id" in raw and "method" in raw:  # a request: the client waits for an answer
            detail = f"Invalid Params for {method}: {exc.__cause__ or exc.message}"
            _reply(protocol, raw.get("id"), JsonRpcInvalidParams(message=detail))
        return
    protocol.handle_message(message)


def _reply(protocol: JsonRPCProtocol, msg_id: Any, error: JsonRpcException) -> None:
    valid = isinstance(msg_id, int | str) and not isinstance(msg_id, bool)
    response = lsp.ResponseErrorMessage(
        id=msg_id if valid else None, error=error.to_response_error()
    )
    protocol._send_data(response)  # pygls's one writer (adds the Content-Length header)


# -- the loop -----------------------------------------------------------------------------


async def serve_stdin(
    stdin: BinaryIO,
    protocol: JsonRPCProtocol,
    stopped: Callable[[], bool],
    report: Callable[[str], None],
    early: Early | None = None,
) -> None:
    """Read stdin on a daemon thread, frame, dispatch, until EOF or `stopped()`. Every
    frame already received is dispatched before the loop runs anything else, so a
    debounced lint sees the last of a burst of edits, not the first. `early` holds what
    was read before the server started (`early.answer_initialize`): its frames are
    dispatched first."""
    loop = asyncio.get_running_loop()
    arrived: asyncio.Queue[bytes] = asyncio.Queue()
    framer = early.framer if early is not None else Framer()
    ended = False
    _flush(framer, report)
    for first in early.frames if early is not None else []:
        if first.problem is not None:
            report(first.problem)
        dispatch(protocol, first.body, report)
    if early is not None and early.ended:
        arrived.put_nowait(b"")  # the loop still takes the frames left in the framer
    else:
        threading.Thread(
            target=_pump, args=(stdin.fileno(), loop, arrived), name="prosec-lsp-stdin", daemon=True
        ).start()
    while not ended and not stopped():
        try:
            chunks = [await asyncio.wait_for(arrived.get(), _IDLE)]
        except TimeoutError:
            chunks = []
        while not arrived.empty():
            chunks.append(arrived.get_nowait())
        for chunk in chunks:
            ended = ended or not chunk
            framer.feed(chunk)
        while (frame := framer.next_frame(idle=not chunks or ended)) is not None:
            _flush(framer, report)
            if frame.problem is not None:
                report(frame.problem)
            dispatch(protocol, frame.body, report)
            if stopped():
                return
        _flush(framer, report)


_IDLE = 0.05  # seconds without bytes after which a short body may be taken as it is


def _pump(fd: int, loop: asyncio.AbstractEventLoop, arrived: asyncio.Queue[bytes]) -> None:
    """The reader thread: every read goes to the loop; b"" at EOF (or when reading fails)."""
    while True:
        try:
            data = os.read(fd, _READ)
        except OSError:
            data = b""
        try:
            loop.call_soon_threadsafe(arrived.put_nowait, data)
        except RuntimeError:  # the loop is closed: the server is gone
            return
        if not data:
            return


def _flush(framer: Framer, report: Callable[[str], None]) -> None:
    for problem in framer.problems:
        report(problem)
    framer.problems.clear()
