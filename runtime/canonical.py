"""Canonical JSON (RFC 8785), sha256 tokens, the OPWM1 artifact frame and path normalization.

It also owns strict reading (`loads_strict`): JSON that has a canonical form, refusing
NaN, Infinity, numbers that overflow to infinity and values nested deeper than
`MAX_DEPTH`, for every truth file, trigger payload and ledger line the runtime reads.

The compiler imports this module to fingerprint contracts, and the runtime uses it for
every token, receipt hash and content address; its one dependency is orjson (a base
dependency), the stdlib encoder and a pure-Python encoder being the exact fallbacks.

Canonical JSON follows RFC 8785 (JCS) byte for byte, with two documented choices where
strict RFC 8785 libraries refuse input that renders may produce:

* integers beyond 2**53 keep their exact digits (a strict library refuses them, the
  upstream reference rounds them), so two different large ids never share a token;
* a lone surrogate in a string is written as a lowercase ``\\udxxx`` escape, exactly as
  the upstream reference (ECMAScript ``JSON.stringify``) does.

The fast path serializes with orjson (sorted keys) and proves afterwards that the result
cannot differ from RFC 8785: NaN, infinity and non-JSON leaves are ruled out by reading
the bytes back (skipped for trees from strict parsing), float tokens whose form differs
from ECMAScript's (`X.0`, exponents) are rewritten in place, and a supplementary-plane
character (whose UTF-16 order could reorder keys) or a lone surrogate sends the value to
the stdlib encoder and then to the exact pure-Python encoder, subtree by subtree. Both paths are checked against
the ``rfc8785`` library by property tests.
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import json
import math
import operator
import re
from collections.abc import Mapping
from typing import Any

import orjson

from . import userjson
from .frames import (
    FRAME_MAGIC,
    FrameError,
    PathError,
    content_address,
    decode_frame,
    encode_frame,
    normalize_path,
)

__all__ = [
    "FRAME_MAGIC",
    "MAX_DEPTH",
    "CanonicalError",
    "FrameError",
    "PathError",
    "canonical_json",
    "canonical_json_slow",
    "content_address",
    "decode_frame",
    "encode_frame",
    "json_depth",
    "loads_strict",
    "normalize_path",
    "sha256_token",
    "token",
]

TOKEN_PREFIX = "sha256:"


class CanonicalError(ValueError):
    """A value that has no canonical JSON form (NaN, infinity, a non-JSON type)."""


# ---------------------------------------------------------------------------------------
# Canonical JSON
# ---------------------------------------------------------------------------------------

_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False
)
# Output patterns after which the C encoder's bytes may differ from RFC 8785:
# a float printed by Python repr as `X.0` or with an exponent, or a 4-byte UTF-8
# sequence (a supplementary-plane character, which sorts differently in UTF-16).
# Float tokens Python prints differently from ECMAScript: `X.0` and exponents. Kept as
# separate patterns with literal prefixes, which the regex engine scans for quickly.
_POINT_ZERO = re.compile(rb"\.0(?![0-9])")
_EXPONENT = re.compile(rb"e[+-]")
# The lead bytes of a 4-byte UTF-8 sequence: a supplementary-plane character (sorts
# differently in UTF-16); five substring searches scan faster than a character class.
_SUPPLEMENTARY_LEADS = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")
_DIGITS = frozenset(b"0123456789")


def canonical_json(value: Any, *, finite: bool = False) -> bytes:
    """Return the RFC 8785 canonical JSON bytes of `value` (orjson with proof, else exact).

    orjson writes NaN and infinity as `null` and encodes a few non-JSON types (UUID,
    enum members); unless `finite=True` promises a plain JSON tree without NaN or
    infinity (it came from strict JSON parsing, as every structured truth does), its
    bytes are proven by reading them back: the tree read back equals `value` only when
    every leaf was a JSON value (a NaN read back as `None` never equals itself).
    """
    data = _orjson_fast(value, trusted=finite)
    if data is not None:
        return data
    # Something differs from RFC 8785 somewhere: re-encode container by container, so
    # only the subtrees that need it take the exact pure-Python path.
    parts: list[str] = []
    _emit(value, parts, hybrid=True)
    return "".join(parts).encode("utf-8", "surrogatepass")


# Types orjson would encode natively but RFC 8785 has no form for go to `default`,
# which refuses them (UUID and enum members are caught by the read-back proof).
_ORJSON_OPTIONS = (
    orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
)


def _refuse(value: Any) -> Any:
    raise TypeError(type(value).__name__)


def _orjson_fast(value: Any, *, trusted: bool) -> bytes | None:
    """orjson's bytes, repaired like `_fast`'s; None when it cannot encode the value
    exactly (integers beyond 64 bits, lone surrogates, non-string keys, tuples,
    non-dict mappings, NaN or infinity, non-JSON types)."""
    try:
        data: bytes = orjson.dumps(value, default=_refuse, option=_ORJSON_OPTIONS)
    except (TypeError, orjson.JSONEncodeError):
        return None
    if not trusted:
        kind = type(value)
        if kind is float:
            if not math.isfinite(value):
                return None
        elif kind not in _SCALAR_TYPES and not _reads_back(data, value):
            return None
    return _repair(data)


_SCALAR_TYPES = frozenset({str, int, bool, type(None)})


def _reads_back(data: bytes, value: Any) -> bool:
    """True when `data` parses back to a tree equal to `value`: every leaf was JSON and
    finite. The cyclic GC is paused meanwhile (a JSON tree holds no cycles, and on a
    large heap each generation-2 pass would rescan the copy being built)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return bool(orjson.loads(data) == value)
    finally:
        if was_enabled:
            gc.enable()


def _fast(value: Any) -> bytes | None:
    """The C encoder's bytes when they provably equal RFC 8785 (after fixing float
    tokens in place), else None."""
    try:
        data = _ENCODER.encode(value).encode("utf-8")
    except (TypeError, ValueError, RecursionError, UnicodeEncodeError):
        # not JSON, NaN, too deep, or a lone surrogate (escaped the ECMAScript way)
        return None
    return _repair(data)


def _repair(data: bytes) -> bytes | None:
    """Bytes from a sorted-keys encoder made RFC 8785: float tokens rewritten in place;
    None when a supplementary-plane character could reorder keys (UTF-16 order)."""
    if any(lead in data for lead in _SUPPLEMENTARY_LEADS):
        return None  # keys might sort differently by UTF-16 code units
    if _EXPONENT.search(data) is None:
        if _POINT_ZERO.search(data) is None:
            return data
        if _NEGATIVE_ZERO.search(data) is None:
            return _drop_point_zeros(data)
    return _fix_floats(data)


# `-0.0` anywhere (perhaps inside a string): its fix is not just dropping `.0`
_NEGATIVE_ZERO = re.compile(rb"-0\.0(?![0-9])")


def _drop_point_zeros(data: bytes) -> bytes:
    """`_fix_floats` for bytes without exponents or `-0.0`, with no Python work per token.

    Outside strings, a `.0` not followed by a digit ends a `D.0` token (a `.` appears
    only in numbers there, and these encoders write no `.0` before an exponent), whose
    ECMAScript form is `D`. A hit lies inside a string when an odd number of string
    delimiters precede it: the quotes left after masking escapes (as `_fix_floats`
    explains), counted segment by segment between hits at C speed."""
    if b"\\\\" in data:
        masked = data.replace(b"\\\\", b"__").replace(b'\\"', b"__")
    elif b'\\"' in data:
        masked = data.replace(b'\\"', b"__")
    else:
        masked = data
    hits = [m.start() for m in _POINT_ZERO.finditer(data)]
    quotes = map(masked.count, itertools.repeat(b'"'), [0, *hits], hits)
    inside = itertools.accumulate(map((1).__and__, quotes), operator.xor)
    ends = list(itertools.compress(hits, map(operator.not_, inside)))
    starts = [0, *[end + 2 for end in ends]]
    ends.append(len(data))
    view = memoryview(data)
    return b"".join([view[start:end] for start, end in zip(starts, ends, strict=True)])


# A float token that may differ from ECMAScript: its digits, then `.0` or an exponent.
_FLOAT_TOKEN = re.compile(rb"-?[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?")


def _fix_floats(data: bytes) -> bytes:
    """Rewrite the float tokens whose Python/orjson repr differs from ECMAScript's.

    A hit may lie inside a string; it is a number token only when an
    even number of unescaped quotes precedes it. In the encoders' output a backslash
    appears only inside strings, as an escape, so after masking escaped backslashes
    (`\\\\` → `__`, same length) and then escaped quotes, every `"` left delimits a string.
    """
    escaped = b"\\" in data
    # with no escaped backslash, every `\\"` is an escaped quote: count those instead of
    # masking a copy of the data
    masked = data.replace(b"\\\\", b"__").replace(b'\\"', b"__") if b"\\\\" in data else data
    count_escaped = data.count if escaped and masked is data else None
    out: list[bytes] = []
    last = counted_to = quotes = 0
    hits = sorted(
        [m.start() for m in _POINT_ZERO.finditer(data)]
        + [m.start() for m in _EXPONENT.finditer(data)]
    )
    count = masked.count
    match = _FLOAT_TOKEN.match
    for at in hits:
        if at < last or at == 0 or data[at - 1] not in _DIGITS:
            continue  # a number token has a digit right before `.0` / `e`
        start = at - 1
        while start > 0 and data[start - 1] in _MANTISSA:
            start -= 1
        if start > 0 and data[start - 1] == 45:  # "-"
            start -= 1
        if start > 0 and data[start - 1] not in _BEFORE_VALUE:
            continue  # a number token follows `:`, `,` or `[`; this is inside a string
        quotes += count(b'"', counted_to, start)
        if count_escaped is not None:
            quotes -= count_escaped(b'\\"', counted_to, start)
        counted_to = start
        if quotes % 2:
            continue  # inside a string
        token = match(data, start)
        assert token is not None
        end = token.end()
        text = data[start:end]
        if b"e" not in text:  # `D.0`: an integral float below 1e16, ECMAScript's `D`
            fixed = b"0" if text == b"-0.0" else text[:-2]
        else:
            fixed = format_number(float(text)).encode("ascii")
        out += [data[last:start], fixed]
        last = end
    out.append(data[last:])
    return b"".join(out)


_BEFORE_VALUE = frozenset(b":,[")
_MANTISSA = frozenset(b"0123456789.")


def canonical_json_slow(value: Any) -> bytes:
    """Exact pure-Python RFC 8785 serializer (the reference the fast path falls back to)."""
    parts: list[str] = []
    _emit(value, parts)
    return "".join(parts).encode("utf-8", "surrogatepass")


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _emit(value: Any, out: list[str], hybrid: bool = False) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_quote(value))
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(format_number(value))
    elif isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, str):
                raise CanonicalError(f"object key {key!r} is not a string")
        out.append("{")
        first = True
        for key in sorted(value, key=_utf16_key):
            if not first:
                out.append(",")
            first = False
            out.append(_quote(key))
            out.append(":")
            _emit_child(value[key], out, hybrid)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _emit_child(item, out, hybrid)
        out.append("]")
    else:
        raise CanonicalError(f"{type(value).__name__} is not a JSON value")


def _emit_child(value: Any, out: list[str], hybrid: bool) -> None:
    # Large containers go straight to their children: retrying the C encoder on a big
    # subtree that already failed as part of its parent would encode it twice.
    if hybrid and isinstance(value, dict | list) and len(value) <= 64:
        data = _fast(value)
        if data is not None:
            out.append(data.decode("utf-8"))
            return
    _emit(value, out, hybrid)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r"}
_ESCAPES["\t"] = "\\t"
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _quote(text: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def format_number(number: float) -> str:
    """Format a float the ECMAScript `Number.prototype.toString` way (RFC 8785 §3.2.2.3)."""
    if math.isnan(number) or math.isinf(number):
        raise CanonicalError(f"{number!r} has no JSON form")
    if number == 0:
        return "0"
    if number.is_integer() and abs(number) < 2**53:
        return str(int(number))
    sign = "-" if number < 0 else ""
    digits, exponent = _shortest_digits(abs(number))
    # `exponent` is n in ECMAScript's notation: value = 0.digits * 10**n
    length = len(digits)
    if length <= exponent <= 21:
        body = digits + "0" * (exponent - length)
    elif 0 < exponent <= 21:
        body = digits[:exponent] + "." + digits[exponent:]
    elif -6 < exponent <= 0:
        body = "0." + "0" * (-exponent) + digits
    else:
        power = exponent - 1
        mantissa = digits if length == 1 else digits[0] + "." + digits[1:]
        body = f"{mantissa}e{'+' if power > 0 else '-'}{abs(power)}"
    return sign + body


def _shortest_digits(number: float) -> tuple[str, int]:
    # Python's repr is the shortest round-tripping form, like ECMAScript's.
    mantissa, _, exp_text = repr(number).partition("e")
    exponent = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    if frac == "0":
        frac = ""
    digits = (whole + frac).lstrip("0")
    point = len(whole) + exponent
    if whole == "0":  # 0.000123 -> digits "123", point shifts by the leading zeros
        stripped = frac.lstrip("0")
        point = exponent - (len(frac) - len(stripped))
        digits = stripped
    digits_stripped = digits.rstrip("0")
    return digits_stripped or "0", point


# ---------------------------------------------------------------------------------------
# Strict reading
# ---------------------------------------------------------------------------------------

MAX_DEPTH = 100  # deeper values are refused: every later step may recurse over them


def loads_strict(data: bytes | str, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse JSON that has a canonical form (userjson's one strict reader, at the truth
    depth): no NaN or Infinity, no number that overflows to infinity (`1e400`), nothing
    nested deeper than `max_depth`. Raises JSONInputError (a ValueError) naming the
    problem."""
    return userjson.loads(data, source="", max_depth=max_depth)


def json_depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How deeply `value` nests (a scalar is 0, `[]` is 1), counted level by level
    (no recursion) and stopping just past `limit`."""
    depth = 0
    level = [value] if isinstance(value, dict | list | tuple) else []
    while level and depth <= limit:
        depth += 1
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, dict | list | tuple)
        ]
    return depth


# ---------------------------------------------------------------------------------------
# Tokens and content addresses
# ---------------------------------------------------------------------------------------


def sha256_token(data: bytes) -> str:
    """Return `sha256:<64 lowercase hex>` over raw bytes."""
    return TOKEN_PREFIX + hashlib.sha256(data).hexdigest()


def token(value: Any) -> str:
    """Return the token of a JSON value: sha256 over its canonical JSON."""
    return sha256_token(canonical_json(value))
