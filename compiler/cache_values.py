"""The cache codec's leaf values: integers beyond orjson's range, non-finite floats,
mapping pairs, and `Any` (raw YAML values), stored with one-key type tags so they read
back as the same Python types. Split out of cache_codec.py, which builds the typed
encoders and decoders around these."""

from __future__ import annotations

import base64
import datetime
import math
from collections.abc import Callable
from typing import Any

from .frozen import FrozenMap

__all__ = [
    "CodecError",
    "decode_any",
    "decode_float",
    "decode_pairs",
    "encode_any",
    "encode_float",
    "encode_int",
]

Decoder = Callable[[Any], Any]

_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1  # what orjson writes as a plain number
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class CodecError(ValueError):
    """A value does not fit its expected type (on decode: the data is not a valid cache)."""


def decode_pairs(data: Any, decode_key: Decoder, decode_value: Decoder) -> dict[Any, Any]:
    if type(data) is not list:
        raise CodecError("expected a mapping as a list of pairs")
    decoded = {}
    for pair in data:
        if type(pair) is not list or len(pair) != 2:
            raise CodecError("expected a [key, value] pair")
        key, value = decode_key(pair[0]), decode_value(pair[1])
        try:
            decoded[key] = value
        except TypeError:  # a list or dict as a key
            raise CodecError("a mapping key is not hashable") from None
    return decoded


# -- numbers and raw values (`Any`) ---------------------------------------------------------------


def encode_int(value: int) -> Any:
    return value if _INT_MIN <= value <= _INT_MAX else {"int": str(value)}


def _big_int(text: str) -> int:
    if not text.removeprefix("-").isascii() or not text.removeprefix("-").isdigit():
        raise ValueError(text)  # int() would also take spaces and underscores
    return int(text)  # a ValueError beyond Python's digit limit


def encode_float(value: Any) -> Any:
    if type(value) is not float:
        raise CodecError(f"expected float, found {type(value).__name__}")
    return value if math.isfinite(value) else {"float": repr(value)}


def decode_float(data: Any) -> Any:
    if type(data) is float:
        return data
    if type(data) is dict and len(data) == 1 and data.get("float") in _NON_FINITE:
        return _NON_FINITE[data["float"]]
    raise CodecError("expected float")


def encode_any(value: Any) -> Any:
    kind = type(value)
    if value is None or kind is str or kind is bool:
        return value
    if kind is int:
        return encode_int(value)
    if kind is float:
        return encode_float(value)
    if kind is list:
        return [encode_any(v) for v in value]
    if kind is dict or kind is FrozenMap:
        pairs = [[encode_any(k), encode_any(v)] for k, v in value.items()]
        return {"dict" if kind is dict else "frozenmap": pairs}
    if kind in (tuple, set, frozenset):
        return {kind.__name__: [encode_any(v) for v in value]}
    if kind is datetime.datetime or kind is datetime.date:
        return {kind.__name__: value.isoformat()}
    if kind is bytes:
        return {"bytes": base64.b64encode(value).decode("ascii")}
    raise CodecError(f"cannot store a {kind.__name__}")


def decode_any(data: Any) -> Any:
    kind = type(data)
    if data is None or kind is str or kind is bool or kind is int or kind is float:
        return data
    if kind is list:
        return [decode_any(v) for v in data]
    if kind is dict and len(data) == 1:
        ((tag, payload),) = data.items()
        handler = _ANY_TAGS.get(tag)
        if handler is not None:
            return handler(payload)
    raise CodecError("not a stored value")


def _items(payload: Any) -> list[Any]:
    if type(payload) is not list:
        raise CodecError("expected a list")
    return [decode_any(v) for v in payload]


def _set(kind: type[set[Any]] | type[frozenset[Any]]) -> Callable[[Any], Any]:
    def decode(payload: Any) -> Any:
        try:
            return kind(_items(payload))
        except TypeError:  # a list or dict as a member
            raise CodecError("a set member is not hashable") from None

    return decode


def _parsed(parse: Callable[[str], Any], what: str) -> Callable[[Any], Any]:
    """The decoder of a value stored as text (dates, bytes, big integers)."""

    def decode(payload: Any) -> Any:
        if type(payload) is not str:
            raise CodecError(f"expected {what} as a string")
        try:
            return parse(payload)
        except ValueError:  # binascii.Error and UnicodeError included
            raise CodecError(f"not {what}") from None

    return decode


_ANY_TAGS: dict[str, Callable[[Any], Any]] = {
    "dict": lambda payload: decode_pairs(payload, decode_any, decode_any),
    "frozenmap": lambda payload: FrozenMap(decode_pairs(payload, decode_any, decode_any)),
    "tuple": lambda payload: tuple(_items(payload)),
    "set": _set(set),
    "frozenset": _set(frozenset),
    "int": _parsed(_big_int, "an integer"),
    "float": lambda payload: decode_float({"float": payload}),
    "date": _parsed(datetime.date.fromisoformat, "a date"),
    "datetime": _parsed(datetime.datetime.fromisoformat, "a datetime"),
    "bytes": _parsed(lambda text: base64.b64decode(text.encode("ascii"), validate=True), "bytes"),
}
