"""Apply the fixes diagnostics carry to a file's text (`prosec lint --fix`; the language
server offers the same fixes as code actions, from the same `Fix` values).

Pure: text and diagnostics in, new text out. A fix is applied whole or not at all; a fix
whose edits overlap an edit already chosen waits for the next round (the caller lints
again and re-applies until nothing is left to fix).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .diagnostics import Diagnostic, Fix

__all__ = ["Applied", "apply_fixes", "fixable", "offsets", "qualifier"]


@dataclass(frozen=True, slots=True)
class Applied:
    text: str
    fixed: tuple[Diagnostic, ...]  # the diagnostics whose fix was applied
    unsafe: tuple[Diagnostic, ...]  # fixable only with --unsafe-fixes, left alone


def fixable(found: Diagnostic, unsafe: bool) -> bool:
    return found.fix is not None and (found.fix.safe or unsafe)


def qualifier(producer: str, facet: str) -> str:
    """How a need names its producer so the qualified rung decides (`@atomic` spelled out)."""
    if facet == "@atomic":
        return f"`{producer}` via @atomic"
    return f"`{producer}.{facet}`"


def offsets(text: str) -> list[int]:
    """The offset of each line's first character (line 1 at index 0)."""
    starts = [0]
    for index, char in enumerate(text):
        if char == "\n":
            starts.append(index + 1)
    return starts


def _offset(starts: Sequence[int], text: str, line: int, column: int) -> int | None:
    if not 1 <= line <= len(starts):
        return None
    start = starts[line - 1]
    end = starts[line] - 1 if line < len(starts) else len(text)
    position = start + column - 1
    return position if start <= position <= end else None


def _ranges(text: str, starts: Sequence[int], fix: Fix) -> list[tuple[int, int, str]] | None:
    ranges = []
    for edit in fix.edits:
        span = edit.span
        begin = _offset(starts, text, span.line, span.column)
        end = _offset(starts, text, span.end_line, span.end_column)
        if begin is None or end is None or end < begin:
            return None  # a fix computed for other text: never guess
        ranges.append((begin, end, edit.new_text))
    return ranges


def apply_fixes(text: str, diagnostics: Iterable[Diagnostic], *, unsafe: bool = False) -> Applied:
    """`text` with every applicable, non-overlapping fix of `diagnostics` applied."""
    starts = offsets(text)
    chosen: list[tuple[int, int, str]] = []
    fixed: list[Diagnostic] = []
    skipped: list[Diagnostic] = []
    for found in sorted(set(diagnostics), key=Diagnostic.sort_key):
        if found.fix is None:
            continue
        if not found.fix.safe and not unsafe:
            skipped.append(found)
            continue
        ranges = _ranges(text, starts, found.fix)
        if ranges is None or any(_overlaps(r, c) for r in ranges for c in chosen):
            continue
        chosen.extend(ranges)
        fixed.append(found)
    for begin, end, new_text in sorted(chosen, key=lambda r: (r[0], r[1]), reverse=True):
        text = text[:begin] + new_text + text[end:]
    return Applied(text=text, fixed=tuple(fixed), unsafe=tuple(skipped))


def _overlaps(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    if a[0] == a[1] == b[0] == b[1]:
        return True  # two insertions at one place: their order would be a guess
    return (a[0] < b[1] and b[0] < a[1]) or a[0] == b[0]
