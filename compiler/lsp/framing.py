"""Finding LSP base-protocol frames in the bytes read from stdin (no I/O, no pygls): the
`Framer` of `stream`, in a module of its own so the language server can read and answer
`initialize` before it imports pygls and lsprotocol (`early`)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["MAX_BODY", "READ", "Frame", "Framer"]

MAX_BODY = 256 << 20  # a larger Content-Length is refused, not waited for
_HEADER = re.compile(rb"Content-Length:[ \t]*(\d{1,20})[ \t]*\r\n", re.IGNORECASE)
_OTHER_HEADER = re.compile(rb"[A-Za-z][A-Za-z0-9-]*:[^\r\n]*\r\n")
_PARTIAL = len(b"Content-Length: ") + 20 + 2  # bytes that may hold the start of a header
_PARTIAL_LINE = re.compile(rb"(?:[A-Za-z][A-Za-z0-9-]{0,63}(?::[^\r\n]{0,1024})?\r?)?")
READ = 1 << 16  # bytes asked of one read of stdin


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
