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
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

from lsprotocol import types as lsp
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
)
from pygls.protocol import JsonRPCProtocol

__all__ = ["MAX_BODY", "Frame", "Framer", "dispatch", "serve_stdin"]

log = logging.getLogger("prosec.lsp")

MAX_BODY = 256 << 20  # a larger Content-Length is refused, not waited for
_HEADER = re.compile(rb"Content-Length:[ \t]*(\d{1,20})[ \t]*\r\n", re.IGNORECASE)
_OTHER_HEADER = re.compile(rb"[A-Za-z][A-Za-z0-9-]*:[^\r\n]*\r\n")
_PARTIAL = len(b"Content-Length: ") + 20 + 2  # bytes that may hold the start of a header
_PARTIAL_LINE = re.compile(rb"(?:[A-Za-z][A-Za-z0-9-]{0,63}(?::[^\r\n]{0,1024})?\r?)?")
_READ = 1 << 16


@dataclass(frozen=True, slots=True)
class Frame:
    """One message body, and what went wrong framing it (None when nothing did)."""

    body: bytes
    problem: str | None = None


class Framer:
    """Bytes in, frames out (no I/O): `feed` what arrives, then take `next_frame` until it
    returns None. `idle=True` says no more bytes are arriving for now."""

    def __init__(self, max_body: int = MAX_BODY) -> None:
        self.max_body = max_body
        self.buffer = bytearray()
        self.problems: list[str] = []
        self._scanned = 0  # how far the current body has been searched for a header
        self._tried = 0  # the buffer length at the last attempt to parse a short body

    def feed(self, data: bytes) -> None:
        self.buffer += data

    def next_frame(self, *, idle: bool = False) -> Frame | None:
        while True:
            match = _HEADER.search(self.buffer)
            if match is None:
                self._drop_junk(self._header_tail())
                return None
            self._drop_junk(_start_of_headers(self.buffer, match.start()))
            match = _HEADER.search(self.buffer)
            assert match is not None
            end = _end_of_headers(self.buffer, match.end())
            if end is None:
                return None  # the header block is not complete yet
            if end < 0:
                self._skip(match.end(), "a header block without its blank line")
                continue
            length = int(match.group(1))
            if length > self.max_body:
                self._skip(end, f"a frame of {length} bytes (the limit is {self.max_body})")
                continue
            return self._body(end, length, idle)

    def _body(self, start: int, length: int, idle: bool) -> Frame | None:
        """The body that starts at `start`, declared `length` bytes long."""
        stop = start + length
        # scan only what arrived since the last look (a large body comes in many reads)
        scan_from = max(start, self._scanned - _PARTIAL)
        following = _HEADER.search(self.buffer, scan_from, min(stop, len(self.buffer)) + _PARTIAL)
        self._scanned = len(self.buffer)
        if following is not None and following.start() < stop:
            # the next header starts inside the declared body: the length was too large
            cut = _start_of_headers(self.buffer, following.start(), floor=start)
            return self._take(start, cut, f"Content-Length {length} runs into the next message")
        if len(self.buffer) >= stop:
            if not self.buffer[start:stop].rstrip().endswith(b"}"):
                # a JSON-RPC message ends with `}`: the length may be too small, and the
                # message may run up to the next header
                return self._short(start, stop, length, idle)
            return self._take(start, stop, None)
        if idle and self._tried != len(self.buffer) and _parses(self.buffer[start:]):
            # nothing more is coming and what came is a whole message: the length was
            # too large and the client waits for the answer
            return self._take(start, len(self.buffer), f"Content-Length {length} is too large")
        self._tried = len(self.buffer) if idle else self._tried
        return None

    def _short(self, start: int, stop: int, length: int, idle: bool) -> Frame | None:
        following = _HEADER.search(self.buffer, stop)
        if following is None and not idle:
            return None  # wait: the rest of the message (and the next header) may come
        cut = (
            len(self.buffer)
            if following is None
            else _start_of_headers(self.buffer, following.start(), floor=stop)
        )
        if _parses(self.buffer[start:cut]):
            return self._take(start, cut, f"Content-Length {length} is too small")
        return self._take(start, stop, None)  # not a message either way: dispatch says so

    def _take(self, start: int, stop: int, problem: str | None) -> Frame:
        body = bytes(self.buffer[start:stop])
        del self.buffer[:stop]
        self._scanned = self._tried = 0
        return Frame(body, problem)

    def _header_tail(self) -> int:
        """Where the trailing bytes that may still become a header block begin (whole
        `Name: value` lines and a partial line that could be one); before it is junk."""
        last = self.buffer.rfind(b"\n") + 1
        if not _PARTIAL_LINE.fullmatch(self.buffer, last):
            return len(self.buffer)
        return _start_of_headers(self.buffer, last)

    def _drop_junk(self, upto: int) -> None:
        if upto > 0:
            junk = bytes(self.buffer[:upto])
            del self.buffer[:upto]
            self._scanned = self._tried = 0
            if junk.strip():
                self.problems.append(f"skipped {len(junk)} bytes that are not a message")

    def _skip(self, upto: int, what: str) -> None:
        del self.buffer[:upto]
        self._scanned = self._tried = 0
        self.problems.append(f"skipped {what}")


def _start_of_headers(buffer: bytearray, at: int, floor: int = 0) -> int:
    """Where the header block holding the header at `at` begins (other `Name: value`
    lines, such as Content-Type, may come first)."""
    start = at
    while start > floor:
        line_start = buffer.rfind(b"\n", floor, start - 1) + 1
        if line_start < floor:
            line_start = floor
        if not _OTHER_HEADER.fullmatch(buffer, line_start, start):
            break
        start = line_start
    return start


def _end_of_headers(buffer: bytearray, at: int) -> int | None:
    """The offset after the blank line that ends the header block (None: not yet in the
    buffer; -1: something other than header lines comes first)."""
    position = at
    while True:
        if len(buffer) - position < 2:
            return None
        if buffer[position : position + 2] == b"\r\n":
            return position + 2
        line = _OTHER_HEADER.match(buffer, position)
        if line is None:
            newline = buffer.find(b"\n", position)
            return None if newline < 0 and len(buffer) - position < 200 else -1
        position = line.end()


def _parses(data: bytes | bytearray) -> bool:
    try:
        return isinstance(json.loads(data), dict)
    except (ValueError, RecursionError):
        return False


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
) -> None:
    """Read stdin on a daemon thread, frame, dispatch, until EOF or `stopped()`. Every
    frame already received is dispatched before the loop runs anything else, so a
    debounced lint sees the last of a burst of edits, not the first."""
    loop = asyncio.get_running_loop()
    arrived: asyncio.Queue[bytes] = asyncio.Queue()
    threading.Thread(
        target=_pump, args=(stdin.fileno(), loop, arrived), name="prosec-lsp-stdin", daemon=True
    ).start()
    framer = Framer()
    ended = False
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
