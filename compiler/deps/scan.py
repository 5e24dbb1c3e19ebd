"""The references a parsed file makes to other files: `use "…"` statements, `pattern:` of
pattern instances (nested ones too) and legacy `### Services` entries."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..ir import Contract, Import, PatternInstance, SourceFile
from ..prosescript.rule import prose_fences
from .identifiers import is_dependency

# a fence is parsed (lark loads) only when a line of it may be a `use` statement
_MAY_USE = re.compile(r"^[ \t]*use[ \t]", re.M)
_FIRST_WORD = re.compile(r"[^\s`:,]+")


def references(source: SourceFile) -> list[Import]:
    """Every reference of the file, in source order (unresolved: `target` is None)."""
    found: list[Import] = []
    for contract in source.contracts:
        if contract.expanded_from is not None:
            continue
        found.extend(_uses(contract, source.path))
        for instance in contract.pattern_instances:
            found.extend(_patterns(instance))
        found.extend(_services(contract))
    return sorted(found, key=lambda i: (i.span.line, i.span.column, i.kind, i.text))


def _uses(contract: Contract, path: str) -> Iterator[Import]:
    fences = [f for f in prose_fences(contract) if _MAY_USE.search(f.content)]
    if not fences:
        return
    from ..prosescript.ir import Use
    from ..prosescript.parse import parse_script

    for fence in fences:
        script, _ = parse_script(fence, path)  # a syntax error is the ProseScript rule's
        if script is None:
            continue
        for stmt in script.statements:
            if isinstance(stmt, Use) and stmt.source.value.strip():
                yield Import(kind="use", text=stmt.source.value, span=stmt.source.span)


def _patterns(instance: PatternInstance) -> Iterator[Import]:
    if instance.pattern.strip():
        yield Import(kind="pattern", text=instance.pattern.strip(), span=instance.span)
    for _, value in instance.bindings:
        yield from _nested(value, instance)


def _nested(value: Any, instance: PatternInstance) -> Iterator[Import]:
    """Nested instances are slot values: a mapping with `pattern`, alone or in a list."""
    values = value if isinstance(value, tuple) else (value,)
    for item in values:
        if isinstance(item, Mapping) and isinstance(item.get("pattern"), str):
            yield Import(kind="pattern", text=item["pattern"].strip(), span=instance.span)
            bound = item.get("with")
            if isinstance(bound, Mapping):
                for inner in bound.values():
                    yield from _nested(inner, instance)


def _services(contract: Contract) -> Iterator[Import]:
    """Legacy `### Services` entries that name a dependency (`std/…`, `host/owner/repo/…`);
    plain names are the project's own contracts."""
    for section in contract.sections_named("services"):
        for item in section.body.items:
            match = _FIRST_WORD.search(item.name or item.text)
            if match and is_dependency(match.group(0)):
                yield Import(kind="service", text=match.group(0), span=item.span)
