"""Frozen dataclasses ⇄ plain JSON data, driven by type hints; decoding checks every value.

The build cache stores IR trees as orjson data instead of pickles, so that reading a cache
can never run code. Encoders and decoders are built once per type hint from
`typing.get_type_hints` and cached. The layout is positional and compact:

- a dataclass is a list of its field values in declaration order;
- `X | None` is null or X; any other union is `[member index, value]`;
- tuples are lists; a mapping is a list of `[key, value]` pairs; an enum is its value;
- `Any` (raw YAML values) keeps its Python type: lists are lists, every other container,
  dates, bytes, big integers and non-finite floats are one-key tagged objects.

Decoding raises `CodecError` on anything that does not fit the expected type exactly, so a
damaged or foreign file is refused rather than half-trusted. `schema` digests the layout
of a set of root types, so a cache written for another shape of the IR is never decoded.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import hashlib
import operator
import types
import typing
from collections.abc import Callable
from pathlib import PurePath
from typing import Any

from .cache_values import (
    CodecError,
    decode_any,
    decode_float,
    decode_pairs,
    encode_any,
    encode_float,
)

__all__ = ["CodecError", "Decoder", "Encoder", "decode", "decoder", "encode", "encoder", "schema"]

Encoder = Callable[[Any], Any]
Decoder = Callable[[Any], Any]

_ENCODERS: dict[Any, Encoder] = {}
_DECODERS: dict[Any, Decoder] = {}
_MAPPINGS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)
_PRIMITIVES = (str, bool, int, float, type(None))
_PLAIN = (str, bool, int)


def encode(hint: Any, value: Any) -> Any:
    """`value` as JSON-able data; raises CodecError when it does not fit `hint`."""
    return encoder(hint)(value)


def decode(hint: Any, data: Any) -> Any:
    """The value `data` encodes, checked against `hint`; raises CodecError otherwise."""
    return decoder(hint)(data)


def encoder(hint: Any) -> Encoder:
    found = _ENCODERS.get(hint)
    if found is None:
        found = _build(hint)[0]
    return found


def decoder(hint: Any) -> Decoder:
    found = _DECODERS.get(hint)
    if found is None:
        found = _build(hint)[1]
    return found


def schema(*roots: Any) -> str:
    """A digest of the encoded layout of `roots` and every type they reach."""
    lines: list[str] = []
    seen: set[Any] = set()
    for root in roots:
        _describe(root, seen, lines)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


# -- building -----------------------------------------------------------------------------


def _build(hint: Any) -> tuple[Encoder, Decoder]:
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _dataclass(hint)  # registers itself first: dataclasses may be recursive
    pair = _make(hint)
    _ENCODERS[hint], _DECODERS[hint] = pair
    return pair


def _make(hint: Any) -> tuple[Encoder, Decoder]:
    if hint is Any:
        return encode_any, decode_any
    if hint is None or hint is type(None):
        return _exact(type(None))
    if hint in _PLAIN:
        return _exact(hint)
    if hint is float:
        return encode_float, decode_float
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum(hint)
    if isinstance(hint, type) and issubclass(hint, PurePath):
        return _path(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return _union(args)
    if hint is tuple or origin is tuple:
        return _tuple(args)
    mapping = origin or hint
    if isinstance(mapping, type) and issubclass(mapping, collections.abc.Mapping):
        # abstract mappings decode to a dict (what the parser builds), others to themselves
        return _mapping(args or (Any, Any), dict if mapping in _MAPPINGS else mapping)
    raise TypeError(f"the cache codec does not support the type hint {hint!r}")


def _fields(cls: type) -> tuple[tuple[str, Any], ...]:
    hints = typing.get_type_hints(cls)
    found = []
    for f in dataclasses.fields(cls):
        if not f.init:
            raise TypeError(f"the cache codec cannot rebuild {cls.__name__}.{f.name} (init=False)")
        found.append((f.name, hints[f.name]))
    return tuple(found)


def _dataclass(cls: type) -> tuple[Encoder, Decoder]:
    fields = _fields(cls)
    names = tuple(name for name, _ in fields)
    label = cls.__name__
    values = _several(operator.attrgetter, names)
    # str, bool and int fields are stored as they are, checked in one go (the bulk of the
    # IR: spans); orjson refuses an int beyond 64 bits, which leaves that entry out
    plain = [i for i, (_, hint) in enumerate(fields) if hint in _PLAIN]
    plain_types = tuple(fields[i][1] for i in plain)
    plain_values = _several(operator.itemgetter, plain)
    converted: list[tuple[int, Encoder, Decoder]] = []
    setters = [_setter(cls, name) for name in names]

    def encode(value: Any) -> Any:
        if type(value) is not cls:
            raise CodecError(f"expected {label}, found {type(value).__name__}")
        out = list(values(value))
        if tuple(map(type, plain_values(out))) != plain_types:
            raise CodecError(f"a field of {label} holds a value of another type")
        for i, encode_field, _ in converted:
            out[i] = encode_field(out[i])
        return out

    fast: list[Decoder] = []

    def decode(data: Any) -> Any:  # what a recursive field holds while `fast` is built
        return fast[0](data)

    post_init = hasattr(cls, "__post_init__")
    _ENCODERS[cls], _DECODERS[cls] = encode, decode
    for i, (_, hint) in enumerate(fields):
        if hint not in _PLAIN:
            converted.append((i, encoder(hint), decoder(hint)))
    fast.append(_decode_fields(cls, fields, {i: d for i, _, d in converted}, setters, post_init))
    _DECODERS[cls] = fast[0]
    return encode, fast[0]


def _decode_fields(
    cls: type,
    fields: tuple[tuple[str, Any], ...],
    convert: dict[int, Decoder],
    setters: list[Callable[[Any, Any], None]],
    post_init: bool,
) -> Decoder:
    """One dataclass's decoder, written out field by field (no loop, no copy): the list's
    length, the exact type of each str, bool and int field, then each field decoded and
    set in declaration order. Every field is set, so skipping __init__ (twice as slow)
    builds the same value, except for a class with __post_init__, which is called."""
    size, label = len(fields), cls.__name__
    names = [f"v{i}" for i in range(size)]
    scope: dict[str, Any] = {"cls": cls, "new": object.__new__, "CodecError": CodecError}
    lines = [
        "def decode(data):",
        f"    if type(data) is not list or len(data) != {size}:",
        f"        raise CodecError('expected {label} as a list of {size} fields')",
    ]
    if size:
        lines.append(f"    {', '.join(names)}, = data")
    plain = [f"type(v{i}) is not t{i}" for i, (_, hint) in enumerate(fields) if hint in _PLAIN]
    for i, (_, hint) in enumerate(fields):
        if hint in _PLAIN:
            scope[f"t{i}"] = hint
    if plain:
        lines.append(f"    if {' or '.join(plain)}:")
        lines.append(
            f"        raise CodecError('a field of {label} holds a value of another type')"
        )
    values = []
    for i in range(size):
        if i in convert:
            scope[f"d{i}"] = convert[i]
            values.append(f"d{i}(v{i})")
        else:
            values.append(f"v{i}")
    if post_init:
        arguments = ", ".join(f"{name}={v}" for (name, _), v in zip(fields, values, strict=True))
        lines.append(f"    return cls({arguments})")
    else:
        lines.append("    value = new(cls)")
        for i, v in enumerate(values):
            scope[f"s{i}"] = setters[i]
            lines.append(f"    s{i}(value, {v})")
        lines.append("    return value")
    exec("\n".join(lines), scope)  # the source is made of field positions, not of data
    decoder: Decoder = scope["decode"]
    return decoder


def _several(getter: Callable[..., Callable[[Any], Any]], keys: Any) -> Callable[[Any], Any]:
    """`operator.attrgetter` / `itemgetter` of `keys` that always returns a tuple."""
    keys = tuple(keys)
    if len(keys) > 1:
        return getter(*keys)
    if keys:
        one = getter(keys[0])
        return lambda value: (one(value),)
    return lambda value: ()


def _setter(cls: type, name: str) -> Callable[[Any, Any], None]:
    """How to set one field of a (frozen) instance: its slot, else object.__setattr__."""
    slot = cls.__dict__.get(name)
    if isinstance(slot, types.MemberDescriptorType):
        return slot.__set__
    return lambda instance, value: object.__setattr__(instance, name, value)


def _exact(kind: type) -> tuple[Encoder, Decoder]:
    label = "null" if kind is type(None) else kind.__name__

    def check(value: Any) -> Any:
        if type(value) is not kind:
            raise CodecError(f"expected {label}, found {type(value).__name__}")
        return value

    return check, check


def _enum(cls: type[enum.Enum]) -> tuple[Encoder, Decoder]:
    members: dict[tuple[type, Any], enum.Enum] = {}
    for member in cls:
        if type(member.value) not in (str, int):
            raise TypeError(f"the cache codec needs str or int values in {cls.__name__}")
        members[(type(member.value), member.value)] = member
    label = cls.__name__

    def encode(value: Any) -> Any:
        if type(value) is not cls:
            raise CodecError(f"expected {label}, found {type(value).__name__}")
        return value.value

    def decode(data: Any) -> Any:
        found = members.get((type(data), data)) if type(data) in (str, int) else None
        if found is None:
            raise CodecError(f"not a value of {label}")
        return found

    return encode, decode


def _path(cls: type[PurePath]) -> tuple[Encoder, Decoder]:
    def encode(value: Any) -> Any:
        if not isinstance(value, cls):
            raise CodecError(f"expected a path, found {type(value).__name__}")
        return str(value)

    def decode(data: Any) -> Any:
        if type(data) is not str:
            raise CodecError("expected a path")
        return cls(data)

    return encode, decode


def _union(args: tuple[Any, ...]) -> tuple[Encoder, Decoder]:
    optional = type(None) in args
    members = tuple(a for a in args if a is not type(None))
    if len(members) == 1:
        inner_encode, inner_decode = encoder(members[0]), decoder(members[0])

        def encode_optional(value: Any) -> Any:
            return None if value is None else inner_encode(value)

        def decode_optional(data: Any) -> Any:
            return None if data is None else inner_decode(data)

        return encode_optional, decode_optional
    encoders = [encoder(m) for m in members]
    decoders = [decoder(m) for m in members]
    # the member is found by the value's exact type, else by isinstance (never for the
    # primitives: True must not pass for an int)
    exact = {m: i for i, m in enumerate(members) if isinstance(m, type) and m is not Any}
    loose = [(i, _accepts(m)) for i, m in enumerate(members) if m not in _PRIMITIVES]
    count = len(members)

    def encode(value: Any) -> Any:
        if value is None and optional:
            return None
        index = exact.get(type(value))
        if index is None:
            index = next((i for i, accepts in loose if accepts(value)), None)
        if index is None:
            raise CodecError(f"{type(value).__name__} is no member of the union")
        return [index, encoders[index](value)]

    def decode(data: Any) -> Any:
        if data is None and optional:
            return None
        if type(data) is not list or len(data) != 2 or type(data[0]) is not int:
            raise CodecError("expected a union as [member, value]")
        if not 0 <= data[0] < count:
            raise CodecError("no such union member")
        return decoders[data[0]](data[1])

    return encode, decode


def _accepts(hint: Any) -> Callable[[Any], bool]:
    """Which values a non-class union member (tuple[…], Mapping[…], Any …) takes on encode."""
    if hint is Any:
        return lambda value: True
    origin = typing.get_origin(hint) or hint
    if isinstance(origin, type):
        return lambda value: isinstance(value, origin)
    raise TypeError(f"the cache codec does not support {hint!r} inside a union")


def _tuple(args: tuple[Any, ...]) -> tuple[Encoder, Decoder]:
    if not args:
        args = (Any, ...)
    if len(args) == 2 and args[1] is Ellipsis:
        return _variadic(args[0])
    if args == ((),):  # tuple[()]
        args = ()
    encoders = [encoder(a) for a in args]
    decoders = [decoder(a) for a in args]
    size = len(args)

    def encode(value: Any) -> Any:
        if type(value) is not tuple or len(value) != size:
            raise CodecError(f"expected a tuple of {size}")
        return [e(v) for e, v in zip(encoders, value, strict=True)]

    def decode(data: Any) -> Any:
        if type(data) is not list or len(data) != size:
            raise CodecError(f"expected a list of {size}")
        return tuple(d(v) for d, v in zip(decoders, data, strict=True))

    return encode, decode


def _variadic(item: Any) -> tuple[Encoder, Decoder]:
    encode_item, decode_item = encoder(item), decoder(item)

    def encode(value: Any) -> Any:
        if type(value) is not tuple:
            raise CodecError(f"expected a tuple, found {type(value).__name__}")
        return [encode_item(v) for v in value]

    def decode(data: Any) -> Any:
        if type(data) is not list:
            raise CodecError("expected a tuple as a list")
        return tuple([decode_item(v) for v in data])

    return encode, decode


def _mapping(args: tuple[Any, ...], kind: type) -> tuple[Encoder, Decoder]:
    """Any mapping as `[[key, value], …]`, decoded into a dict (or `kind`, when concrete)."""
    key_hint, value_hint = args
    encode_key, decode_key = encoder(key_hint), decoder(key_hint)
    encode_value, decode_value = encoder(value_hint), decoder(value_hint)

    def encode(value: Any) -> Any:
        if not isinstance(value, collections.abc.Mapping):
            raise CodecError(f"expected a mapping, found {type(value).__name__}")
        return [[encode_key(k), encode_value(v)] for k, v in value.items()]

    def decode(data: Any) -> Any:
        decoded = decode_pairs(data, decode_key, decode_value)
        return decoded if kind is dict else kind(decoded)

    return encode, decode


# -- schema -------------------------------------------------------------------------------


def _describe(hint: Any, seen: set[Any], lines: list[str]) -> None:
    """Append one line per dataclass and enum reachable from `hint` (depth first)."""
    if hint in seen:
        return
    seen.add(hint)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        fields = _fields(hint)
        lines.append(f"{_name(hint)}({', '.join(f'{n}: {h!r}' for n, h in fields)})")
        for _, field_hint in fields:
            _describe(field_hint, seen, lines)
    elif isinstance(hint, type) and issubclass(hint, enum.Enum):
        lines.append(f"{_name(hint)}{[m.value for m in hint]!r}")
    else:
        for arg in typing.get_args(hint):
            if arg is not Ellipsis and not isinstance(arg, (str, int, tuple)):
                _describe(arg, seen, lines)


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"
