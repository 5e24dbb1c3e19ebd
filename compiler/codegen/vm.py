"""The compiled intent's optional `vm` section: what `prosec run FILE` executes.

Only a file run carries it (a project build never does, so project manifests stay
byte-identical). It names the entry function and holds every function of the project
with its parameters, returns and `### Execution` script, lowered from the typed script
IR (compiler/prosescript/ir.py) to plain data the runtime VM reads without importing
the compiler: each script node becomes an object whose `t` is its class name, its
fields as JSON values (tuples as lists, enums as strings), and `line` for its span.
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any

from ..ir import Contract, ContractKind, Project, Span
from ..prosescript.node import Node

__all__ = ["function_of", "lower_node", "vm_section"]

_SKIP = frozenset({"raw", "bad_escapes", "head_span"})


def lower_node(value: Any) -> Any:
    """Plain data of a script IR value (nodes, tuples, enums, scalars)."""
    if isinstance(value, Node) and type(value).__name__ == "Name":
        return value.text  # type: ignore[attr-defined]
    if isinstance(value, Node) and type(value).__name__ == "Interpolation":
        return ".".join(value.parts)  # type: ignore[attr-defined]
    if isinstance(value, Node):
        out: dict[str, Any] = {"t": type(value).__name__}
        for field in dataclasses.fields(value):
            if field.name in _SKIP:
                continue
            item = getattr(value, field.name)
            if isinstance(item, Span):
                if field.name == "span":
                    out["line"] = item.line
                continue
            out[field.name] = lower_node(item)
        return out
    if isinstance(value, tuple | list):
        return [lower_node(item) for item in value]
    if isinstance(value, Enum):
        return str(value.value)
    return value


def _items(contract: Contract, key: str) -> list[dict[str, str]]:
    for section in contract.sections:
        if section.key == key:
            return [
                {"name": item.name, "description": item.description}
                for item in section.body.items
                if item.name
            ]
    return []


def _script(contract: Contract) -> list[Any] | None:
    """The lowered statements of the contract's `### Execution` fences (None: none)."""
    from ..prosescript.parse import parse_script
    from ..prosescript.rule import prose_fences

    execution = [s for s in contract.sections if s.key == "execution"]
    if not execution:
        return None
    lines = {(s.span.line, s.span.end_line) for s in execution}
    statements: list[Any] = []
    found = False
    for fence in prose_fences(contract):
        if not any(start <= fence.span.line <= end for start, end in lines):
            continue
        script, _ = parse_script(fence, contract.path)
        if script is None:
            continue
        found = True
        statements.extend(lower_node(script.statements))
    return statements if found else None


def function_of(contract: Contract) -> dict[str, Any]:
    """One function (or the entry contract) as the VM runs it."""
    entry: dict[str, Any] = {
        "kind": str(contract.kind),
        "path": contract.path,
        "parameters": _items(contract, "parameters"),
        "returns": _items(contract, "returns"),
    }
    script = _script(contract)
    if script is not None:
        entry["script"] = script
    return entry


def vm_section(project: Project, target: str, entry: str) -> dict[str, Any]:
    """The `vm` section for running `entry` (defined in the source `target`)."""
    functions: dict[str, Any] = {}
    for source in project.files:
        for contract in source.contracts:
            if contract.kind == ContractKind.FUNCTION or contract.name == entry:
                functions.setdefault(contract.name, function_of(contract))
    section: dict[str, Any] = {
        "entry": entry,
        "target": target,
        "functions": dict(sorted(functions.items())),
    }
    imports = _imports(project)
    if imports:
        section["imports"] = imports
    return section


def _imports(project: Project) -> dict[str, Any]:
    """Each resolved `use "…"`: the program it names (its file's contract), by the text."""
    entries = {
        source.path: next((c.name for c in source.contracts if not c.inline), None)
        for source in project.files
    }
    found: dict[str, Any] = {}
    for source in project.files:
        for item in source.imports:
            if item.kind != "use" or item.target is None or entries.get(item.target) is None:
                continue
            found.setdefault(item.text, {"entry": entries[item.target], "target": item.target})
    return dict(sorted(found.items()))
