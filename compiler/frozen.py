"""Immutable values for the IR: a hashable mapping, and deep freeze/thaw of YAML/JSON data."""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from typing import Any, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class FrozenMap(Mapping[K, V]):
    """A read-only mapping that keeps insertion order, compares like a dict and hashes.

    Its values must be hashable for it to hash: build nested data with `freeze`."""

    __slots__ = ("_data", "_hash")

    _data: dict[K, V]
    _hash: int | None

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        object.__setattr__(self, "_data", dict(items))
        object.__setattr__(self, "_hash", None)

    def __getitem__(self, key: K) -> V:
        return self._data[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    # the dict's own (read-only) views and lookups: Mapping's mixins go through
    # __iter__ and __getitem__ one key at a time
    def __contains__(self, key: object) -> bool:
        return key in self._data

    def keys(self) -> KeysView[K]:
        return self._data.keys()

    def values(self) -> ValuesView[V]:
        return self._data.values()

    def items(self) -> ItemsView[K, V]:
        return self._data.items()

    def get(self, key: K, default: Any = None) -> Any:
        return self._data.get(key, default)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenMap):
            return self._data == other._data
        if isinstance(other, Mapping):
            return self._data == dict(other.items())
        return NotImplemented

    def __hash__(self) -> int:
        cached = self._hash
        if cached is None:
            cached = hash(frozenset(self._data.items()))
            object.__setattr__(self, "_hash", cached)
        return cached

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"FrozenMap is immutable (cannot set {name!r})")

    def __reduce__(self) -> tuple[type[FrozenMap[K, V]], tuple[tuple[tuple[K, V], ...]]]:
        # rebuilt from its items: a cached hash of strings is only valid in one process
        return (FrozenMap, (tuple(self._data.items()),))

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"


def freeze(value: Any) -> Any:
    """`value` with every dict a `FrozenMap`, every list a tuple and every set a frozenset."""
    if isinstance(value, Mapping):
        return FrozenMap((k, freeze(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(freeze(v) for v in value)
    return value


_SCALARS = frozenset({str, int, float, bool, type(None)})


def thaw(value: Any) -> Any:
    """The JSON-shaped form of a frozen value: mappings → dicts, tuples → lists."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is FrozenMap:
        return {k: thaw(v) for k, v in value._data.items()}
    if kind is tuple:
        return [thaw(v) for v in value]
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in value]
    return value
