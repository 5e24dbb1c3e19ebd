"""`@value`: a frozen, slotted dataclass built with one code generation instead of seven.

`@dataclass(frozen=True, slots=True)` compiles `__init__`, `__repr__`, `__eq__`,
`__hash__`, `__setattr__`, `__delattr__` and the pickling pair one `exec` at a time and
then rebuilds the class for its slots: about a millisecond per class, and `prosec lint`
creates some sixty of them before it reads a file. `@value` lets `dataclasses` register
the fields (no method generated), writes the same methods in one `exec`, and builds the
slotted class once. The result is a dataclass to the `dataclasses` module (`fields`,
`replace`, `asdict`, `is_dataclass`) and to type checkers (`dataclass_transform`), with
the semantics of `@dataclass(frozen=True, slots=True)`: instances compare and hash by
their fields (those with `compare=True`), in order, and never change.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
from collections.abc import Callable
from dataclasses import MISSING, FrozenInstanceError
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T")


@overload
def value(cls: type[T], /) -> type[T]: ...


@overload
def value(*, kw_only: bool = ...) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def value(cls: type[T] | None = None, /, *, kw_only: bool = False) -> Any:
    """`@value` or `@value(kw_only=True)` on a class with annotated fields."""

    def wrap(target: type[T]) -> type[T]:
        return _build(target, kw_only)

    return wrap if cls is None else wrap(cls)


def _build(cls: type[T], kw_only: bool) -> type[T]:
    if "__slots__" in cls.__dict__ or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: @value makes the slots and has no __post_init__")
    if cls.__doc__ is None:  # spares dataclasses an `inspect.signature` call
        cls.__doc__ = cls.__name__
    dataclasses.dataclass(cls, init=False, repr=False, eq=False, match_args=False, kw_only=kw_only)
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    annotated = inspect.get_annotations(cls)
    own = tuple(f.name for f in fields if f.name in annotated)
    namespace: dict[str, Any] = {
        k: v for k, v in cls.__dict__.items() if k not in (*own, "__dict__", "__weakref__")
    }
    namespace["__slots__"] = own
    namespace["__match_args__"] = tuple(f.name for f in fields if f.init and not f.kw_only)
    namespace.update(_methods(cls.__qualname__, fields))
    metaclass: Any = type(cls)
    built: type[T] = metaclass(cls.__name__, cls.__bases__, namespace)
    built.__qualname__ = cls.__qualname__
    return built


def _methods(qualname: str, fields: tuple[dataclasses.Field[Any], ...]) -> dict[str, Any]:
    """`__init__` generated for the class (the one method on every hot path); the others
    shared, reading the field names the class carries."""
    scope: dict[str, Any] = {"_set": object.__setattr__}
    params, body = [], []
    positional = [f for f in fields if f.init and not f.kw_only]
    keyword = [f for f in fields if f.init and f.kw_only]
    for index, f in enumerate((*positional, *keyword)):
        if index == len(positional):
            params.append("*")  # the keyword-only fields follow
        if f.default is not MISSING:
            scope[f"_d_{f.name}"] = f.default
            params.append(f"{f.name}=_d_{f.name}")
        elif f.default_factory is not MISSING:
            scope[f"_f_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_f_{f.name}")
        else:
            params.append(f.name)
    for f in fields:
        if not f.init:
            scope[f"_d_{f.name}"] = f.default
            scope[f"_f_{f.name}"] = f.default_factory
            source = f"_d_{f.name}" if f.default is not MISSING else f"_f_{f.name}()"
        elif f.default_factory is not MISSING:
            source = f"_f_{f.name}() if {f.name} is _f_{f.name} else {f.name}"
        else:
            source = f.name
        body.append(f"    _set(self, {f.name!r}, {source})")
    source = "\n".join([f"def __init__(self, {', '.join(params)}):", *(body or ["    pass"])])
    exec(source, scope)
    init = scope["__init__"]
    init.__qualname__ = f"{qualname}.__init__"
    compared = tuple(f.name for f in fields if f.compare)
    return {
        "__init__": init,
        "_value_fields": tuple(f.name for f in fields),
        "_value_shown": tuple(f.name for f in fields if f.repr),
        "_value_key": _key(compared),
        "__eq__": _eq,
        "__hash__": _hash,
        "__repr__": _repr,
        "__setattr__": _setattr,
        "__delattr__": _delattr,
        "__getstate__": _getstate,
        "__setstate__": _setstate,
    }


def _key(names: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    """The compared fields' values as a tuple (attrgetter returns a bare value for one)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        return operator.attrgetter(names[0], names[0])
    return lambda _: ()


def _eq(self: Any, other: Any) -> object:
    if other.__class__ is not self.__class__:
        return NotImplemented
    same: bool = self._value_key(self) == self._value_key(other)
    return same


def _hash(self: Any) -> int:
    return hash(self._value_key(self))


def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._value_shown)
    return f"{type(self).__qualname__}({shown})"


def _setattr(self: object, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: object, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, name) for name in self._value_fields)


def _setstate(self: Any, state: tuple[Any, ...]) -> None:
    for name, item in zip(self._value_fields, state, strict=True):
        object.__setattr__(self, name, item)
