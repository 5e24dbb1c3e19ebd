"""Walk an IR value and check that every span lies inside the text it was parsed from."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

from prosec.compiler.diagnostics import Diagnostic
from prosec.compiler.ir import Span


def spans_in(value: Any) -> Iterator[Span]:
    """Every `Span` reachable from an IR node (dataclass fields, tuples, mappings)."""
    if isinstance(value, Span):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from spans_in(getattr(value, field.name))
    elif isinstance(value, tuple | list):
        for item in value:
            yield from spans_in(item)
    elif isinstance(value, Mapping):
        for item in value.values():
            if isinstance(item, Span):
                yield item


def outside(span: Span, text: str, path: str) -> str | None:
    """Why `span` does not lie inside `text`, or None when it does."""
    lines = text.split("\n")
    if span.path != path:
        return f"path {span.path!r} is not {path!r}"
    if not 1 <= span.line <= span.end_line <= len(lines):
        return f"lines {span.line}..{span.end_line} outside 1..{len(lines)}"
    if not 1 <= span.column <= len(lines[span.line - 1]) + 1:
        return f"column {span.column} outside line {span.line}"
    if not 1 <= span.end_column <= len(lines[span.end_line - 1]) + 1:
        return f"end column {span.end_column} outside line {span.end_line}"
    if (span.line, span.column) > (span.end_line, span.end_column):
        return "span ends before it starts"
    return None


def bad_spans(
    tree: Any, diagnostics: list[Diagnostic] | tuple[Diagnostic, ...], text: str, path: str
) -> list[str]:
    found = [*spans_in(tree), *(d.span for d in diagnostics)]
    found += [e.span for d in diagnostics if d.fix for e in d.fix.edits]
    problems = []
    for span in found:
        reason = outside(span, text, path)
        if reason is not None:
            problems.append(f"{span}: {reason}")
    return problems
