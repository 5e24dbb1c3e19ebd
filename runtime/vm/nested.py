"""Nested execution in the VM: a `use`d program called as a step (a run of its own under
imports/) and a named block (`#ID`), called with its own scope. Functions over the
Interpreter, as `flow` is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..protocol import BindingKind
from .narrate import Event
from .program import (
    Frame,
    ProseError,
    ReturnSignal,
    Scope,
    replace_path,
    to_json,
)

if TYPE_CHECKING:
    from .interp import Interpreter


class Unrecorded(Exception):
    """A replayed `use` call whose nested run folder the replayed run does not have."""


def import_of(vm: Interpreter, target: str, scope: Scope) -> Mapping[str, str] | None:
    holder = scope.find(target)
    bound = holder.vars[target] if holder is not None else None
    if isinstance(bound, dict) and isinstance(bound.get("use"), str):
        spec = vm.program.imports.get(bound["use"])
        if spec is None:
            raise ProseError(f"`use {bound['use']!r}` names no program this run can load")
        return spec
    return None


def import_step(
    vm: Interpreter,
    frame: Frame,
    key: str,
    handle: str,
    spec: Mapping[str, str],
    args: dict[str, Any],
) -> Any:
    """`call alias` of a `use`d program: a nested run under imports/ (one step here)."""
    entry = vm.journal.get(key)
    if entry is None and vm.replay is not None and (vm.nest is None or key not in vm.replay):
        if key not in vm.replay:
            raise ProseError(f"the replayed run has no step {key}")
        vm.journal.record(key, "call", vm.replay[key])
        entry = vm.journal.get(key)
    if entry is None:
        if vm.nest is None:
            raise ProseError(f"`{handle}`: nested programs cannot run here")
        try:
            value: Any = {"ok": vm.nest(handle, spec, args, key)}
        except ProseError as error:
            value = {"failed": {"error": "import-failed", "detail": str(error.value)}}
        except Unrecorded:  # a replay whose nested run left no folder: its result
            assert vm.replay is not None
            value = vm.replay[key]
        vm.journal.record(key, "call", value)
        if vm.replay is None:
            with vm._lock:
                vm.performed.append(key)
    else:
        value = entry["value"]
    if isinstance(value, dict) and "failed" in value:
        frame.emit(Event(kind="fail", name=handle, detail="import-failed", depth=frame.depth))
        raise ProseError(value["failed"])
    return value.get("ok") if isinstance(value, dict) else value


def call_block(
    vm: Interpreter, node: Mapping[str, Any], scope: Scope, frame: Frame, key: str
) -> Any:
    name = node["block"]
    block = scope.blocks.get(name)
    if block is None:
        raise ProseError(f"no block `{name}`")
    args = [vm.value(arg["value"], scope, frame, key) for arg in node.get("args") or []]
    row = f"{key}#{name}"
    inner = Scope(scope, frame=row)
    frame.emit(
        Event(
            kind="block",
            name=name,
            detail=",".join(to_json(a) for a in args),
            depth=frame.depth,
        )
    )
    with vm.record.row(row, "block", text=f"do {name}"):
        for param, value in zip(block["params"], args, strict=False):
            inner.define(param, value)
            vm.record.bind(row, param, BindingKind.INPUT, value)
        try:
            vm.block(block["body"], inner, replace_path(frame, row, frame.depth + 1))
            value = None
        except ReturnSignal as done:
            value = done.value
    frame.emit(Event(kind="block-done", name=name, depth=frame.depth))
    return value
