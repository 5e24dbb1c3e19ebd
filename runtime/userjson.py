"""JSON that prosec did not just write: strict parsing with limits and located errors.

Command-line data (`--data`), files a user hands a command (a compiled intent, an MCP
registry), ledger lines and state records read back for verification all go through
`loads` (bytes or text) and `read_file` (a path). Beyond RFC 8259 they refuse what the
runtime could not hash or store faithfully: NaN and Infinity (not JSON, but Python's
parser accepts them), numbers that overflow a double (`1e400`), integers longer than
`MAX_INT_DIGITS` digits, nesting deeper than `MAX_DEPTH`, text that is not UTF-8, and
(for files) anything that is not a regular file or is larger than the caller's cap.
Every refusal is a `JSONInputError` whose message names the source and, when known,
the line and column.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

import orjson

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "JSONInputError",
    "loads",
    "read_file",
    "read_limited",
]

MAX_DEPTH = 256  # arrays and objects inside each other; deeper input is refused
MAX_INT_DIGITS = 1000  # digits of an integer literal (Python refuses 4,300 on its own)
_LONG_DIGITS = re.compile(rf"[0-9]{{{MAX_INT_DIGITS + 1}}}")
# a JSON string literal, written unrolled (runs of plain characters, then one escape):
# the same matches as `"(?:[^"\\]|\\.)*"`, more than twice as fast on large input
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_A_STEP = re.compile(r"[^\x01\x02]+")
_DEPTH_STEP = str.maketrans({"[": "\x01", "{": "\x01", "]": "\x02", "}": "\x02"})


class JSONInputError(ValueError):
    """Input that is not acceptable JSON, or a file that cannot be read as such."""


class _Refused(ValueError):
    """Raised from inside the parser's hooks; carries the reason."""


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number (JSON has no NaN or Infinity)")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:40]} is out of range (it overflows a double)")
    return value


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Refused(f"an integer of {digits} digits is too long (at most {MAX_INT_DIGITS})")
    return int(text)


def _too_deep(text: str, limit: int) -> bool:
    """True when arrays/objects nest deeper than `limit` (strings skipped)."""
    if text.count("[") + text.count("{") <= limit:
        return False  # cannot nest deeper than it has openings
    structure = _NOT_A_STEP.sub("", _STRING.sub("", text).translate(_DEPTH_STEP))
    steps = (1 if c == "\x01" else -1 for c in structure)
    return max(itertools.accumulate(steps, initial=0)) > limit


def loads(data: bytes | str, *, source: str = "JSON", max_depth: int = MAX_DEPTH) -> Any:
    """Parse one JSON document strictly; JSONInputError naming `source` when refused
    (messages start with `source: `, or with nothing when `source` is "")."""
    fast = _orjson_loads(data, max_depth)
    if fast is not _UNDECIDED:
        return fast
    return _exact(data, source, max_depth)


def _exact(data: bytes | str, source: str, max_depth: int) -> Any:
    """The stdlib parser with hooks: every refusal found and worded."""
    prefix = f"{source}: " if source else ""
    if isinstance(data, bytes | bytearray):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONInputError(f"{prefix}not UTF-8 (byte {exc.start}: {exc.reason})") from None
    else:
        text = data
    if _too_deep(text, max_depth):
        raise JSONInputError(f"{prefix}nested deeper than {max_depth} levels")
    # integers are checked only when a long run of digits exists (a hook per integer
    # would slow every ledger line down)
    parse_int = _int if _LONG_DIGITS.search(text) else None
    try:
        return json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=parse_int)
    except json.JSONDecodeError as exc:
        raise JSONInputError(
            f"{prefix}not JSON (line {exc.lineno} column {exc.colno}): {exc.msg}"
        ) from None
    except _Refused as exc:
        raise JSONInputError(f"{prefix}{exc}") from None
    except RecursionError:  # pragma: no cover - _too_deep refuses such input first
        raise JSONInputError(f"{prefix}nested too deeply") from None


_UNDECIDED = object()
# a run of 19 digits anywhere: perhaps an integer beyond 64 bits, which orjson would
# read as a float (such input takes the exact path, which keeps its digits). Found by
# mapping every digit to `0` and everything else to a space (translate and a substring
# search run at memory speed; a regex class scans ten times slower)
_DIGITS_ONLY = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_RUN = b"0" * 19


def _long_integer(raw: bytes | bytearray) -> bool:
    """Whether a run of 19 or more digits could be an integer token: one that starts the
    data or follows `:`, `,`, `[`, `-` or whitespace (runs inside hex digests, or after
    a decimal point or an exponent sign, cannot: orjson reads those exactly)."""
    digits = raw.translate(_DIGITS_ONLY)
    at = digits.find(_LONG_RUN)
    while at >= 0:
        start = at
        while start > 0 and digits[start - 1] == 0x30:
            start -= 1
        if start == 0 or raw[start - 1] in _NUMBER_STARTS:
            return True
        end = digits.find(b" ", at)
        if end < 0:
            return False
        at = digits.find(_LONG_RUN, end)
    return False


_NUMBER_STARTS = frozenset(b":,[- \t\n\r")


def _orjson_loads(data: bytes | bytearray | str, max_depth: int) -> Any:
    """orjson's reading of `data` when it is certainly the one `loads` makes, else
    `_UNDECIDED` (the exact path then reads it, and words any refusal).

    orjson refuses what the exact path refuses (invalid UTF-8 and lone surrogates, NaN,
    Infinity, numbers overflowing a double) and builds the same values, except that it
    reads integers beyond 64 bits as floats: input with a long run of digits is left
    to the exact path. Depth is proven from the bytes when few brackets exist, else
    from orjson's indented output, where a value nested in k containers is a line
    indented by 2k spaces (strings hold no raw newline)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if _long_integer(raw):
        return _UNDECIDED
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _UNDECIDED
    if raw.count(b"[") + raw.count(b"{") <= max_depth:
        return value
    try:
        indented = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:  # nested too deeply for orjson to write
        return _UNDECIDED
    if b"\n" + b" " * (2 * max_depth) in indented:
        return _UNDECIDED  # perhaps deeper than allowed: the exact check decides
    return value


def read_limited(path: Path, max_bytes: int, *, what: str | None = None) -> bytes:
    """The bytes of a regular file of at most `max_bytes`; JSONInputError otherwise
    (missing, a directory, a FIFO or device, unreadable, too large). Messages start with
    `what` (default: the path; "" for none)."""
    name = str(path) if what is None else what
    prefix = f"{name}: " if name else ""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise JSONInputError(f"{prefix}cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise JSONInputError(f"{prefix}cannot read: {kind}")
        if info.st_size > max_bytes:
            raise JSONInputError(
                f"{prefix}too large ({info.st_size} bytes; the limit is {max_bytes})"
            )
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:  # it grew while being read
                raise JSONInputError(f"{prefix}too large (over {max_bytes} bytes)")
        return b"".join(chunks)
    except OSError as exc:
        raise JSONInputError(f"{prefix}cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_file(path: Path, max_bytes: int, *, what: str | None = None) -> Any:
    """Parse the JSON file at `path` (see `read_limited` and `loads`)."""
    name = what or str(path)
    return loads(read_limited(path, max_bytes, what=name), source=name)
