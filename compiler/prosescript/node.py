"""The base of the script IR: frozen, slotted, keyword-only dataclasses, without codegen.

`@dataclass(frozen=True, slots=True)` compiles five methods and rebuilds the class for
each of the ~50 script node types, ~30 ms of every `prosec lint` that meets a ```prose
fence. A node class here gets its slots from its annotations when the class is created
and shares one set of generic methods (keyword-only `__init__`, `__eq__`, `__hash__`,
`__repr__`, frozen `__setattr__`); `dataclasses` then registers its fields without
generating any method, so `dataclasses.fields`, `replace` and `is_dataclass` work as
for any dataclass, and `dataclass_transform` gives type checkers the same view.
"""

from __future__ import annotations

import dataclasses
from dataclasses import FrozenInstanceError
from typing import Any, ClassVar, TypeVar, dataclass_transform

N = TypeVar("N", bound="Node")


@dataclass_transform(kw_only_default=True, frozen_default=True, eq_default=True)
class _NodeType(type):
    """Turns each class's annotated fields (in order) into its `__slots__` and `_fields`."""

    def __new__(
        mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> _NodeType:
        annotations = namespace.get("__annotations__", {})
        own = tuple(
            field
            for field, annotation in annotations.items()
            if not str(annotation).startswith(("ClassVar", "typing.ClassVar"))
        )
        inherited: tuple[str, ...] = next(
            (getattr(b, "_fields", ()) for b in bases if isinstance(b, _NodeType)), ()
        )
        namespace["__slots__"] = own
        namespace["_fields"] = (*inherited, *own)
        # a docstring of its own spares dataclasses an `inspect.signature` call per class
        namespace.setdefault("__doc__", f"{name}({', '.join(namespace['_fields'])})")
        cls = super().__new__(mcs, name, bases, namespace, **kwargs)
        if any(isinstance(base, _NodeType) for base in bases):
            node_class: Any = cls
            # fields only: every method comes from Node
            dataclasses.dataclass(
                node_class, init=False, repr=False, eq=False, match_args=False, kw_only=True
            )
        return cls


class Node(metaclass=_NodeType):
    """A value: built from keywords only, compared and hashed by its fields, never changed."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]]

    def __init__(self, **values: Any) -> None:
        cls = type(self)
        try:
            for field in cls._fields:
                object.__setattr__(self, field, values[field])
        except KeyError as missing:
            raise TypeError(f"{cls.__name__}() needs the keyword argument {missing}") from None
        if len(values) != len(cls._fields):
            extra = ", ".join(sorted(set(values) - set(cls._fields)))
            raise TypeError(f"{cls.__name__}() got unexpected keyword arguments: {extra}")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, field) for field in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{field}={getattr(self, field)!r}" for field in self._fields)
        return f"{type(self).__qualname__}({shown})"

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), dict(zip(self._fields, self._values(), strict=True))))


def _rebuild(cls: type[N], values: dict[str, Any]) -> N:
    return cls(**values)


def fields(node: Node | type[Node]) -> tuple[str, ...]:
    """The field names of a node (or node class), in declaration order."""
    return node._fields
