"""Assignment places: `x = …`, `x.y = …`, `x[i] = …` and `append … to x`, which
rebuild the value held by the root name (values are immutable JSON values)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .program import Frame, ProseError, Scope

if TYPE_CHECKING:
    from .interp import Interpreter

__all__ = ["place_name", "store"]


def place_name(place: Mapping[str, Any]) -> str:
    if place["t"] == "Ref":
        return ".".join(place["parts"])
    return place_name(place["target"])


def store(
    vm: Interpreter, place: Mapping[str, Any], value: Any, scope: Scope, frame: Frame, key: str
) -> None:
    if place["t"] == "Ref":
        parts = place["parts"]
        if len(parts) == 1:
            scope.assign(parts[0], value)
            return
        holder = vm.ref(parts[:-1], scope)
        if not isinstance(holder, dict):
            raise ProseError(f"`{'.'.join(parts[:-1])}` is not an object")
        holder = dict(holder)
        holder[parts[-1]] = value
        store(vm, {"t": "Ref", "parts": parts[:-1]}, holder, scope, frame, key)
        return
    target = vm.value(place["target"], scope, frame, key)
    if place["t"] == "Member" and isinstance(target, dict):
        store(vm, place["target"], {**target, place["name"]: value}, scope, frame, key)
    elif place["t"] == "Index":
        index = vm.value(place["key"], scope, frame, key)
        if isinstance(target, list) and isinstance(index, int) and 0 <= index < len(target):
            store(
                vm,
                place["target"],
                [*target[:index], value, *target[index + 1 :]],
                scope,
                frame,
                key,
            )
        elif isinstance(target, dict):
            store(vm, place["target"], {**target, str(index): value}, scope, frame, key)
        else:
            raise ProseError("cannot assign to that item")
    else:
        raise ProseError("cannot assign there")
