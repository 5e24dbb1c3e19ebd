"""Spans (1-based, code-point columns) ↔ LSP positions (0-based, in the negotiated encoding)."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Span

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"
ENCODINGS = (UTF8, UTF16, UTF32)


@dataclass(frozen=True, slots=True, order=True)
class Position:
    """A 0-based line and a 0-based offset in code units of the negotiated encoding."""

    line: int
    character: int


@dataclass(frozen=True, slots=True)
class Range:
    start: Position
    end: Position


def _width(text: str, encoding: str) -> int:
    """The length of `text` in code units of `encoding`."""
    if encoding == UTF32 or text.isascii():
        return len(text)
    if encoding == UTF8:
        # a client's JSON may carry a lone surrogate; count it as its 3-byte form
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


class LineIndex:
    """The lines of one analysed text, for converting between spans and LSP positions."""

    __slots__ = ("encoding", "lines")

    def __init__(self, text: str, encoding: str = UTF16) -> None:
        if encoding not in ENCODINGS:
            raise ValueError(f"unsupported position encoding {encoding!r}")
        self.lines = text.split("\n")
        self.encoding = encoding

    def line(self, number: int) -> str:
        """The text of 1-based line `number` ('' past the end)."""
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""

    def position(self, line: int, column: int) -> Position:
        """1-based line and code-point column → LSP position, clamped into the text."""
        line = min(max(line, 1), len(self.lines))
        text = self.lines[line - 1]
        column = min(max(column, 1), len(text) + 1)
        return Position(line - 1, _width(text[: column - 1], self.encoding))

    def range(self, span: Span) -> Range:
        start = self.position(span.line, span.column)
        end = self.position(span.end_line, span.end_column)
        return Range(start, max(start, end))

    def point(self, position: Position) -> tuple[int, int]:
        """LSP position → 1-based (line, code-point column), clamped into the text."""
        line = min(max(position.line, 0), len(self.lines) - 1)
        text = self.lines[line]
        if text.isascii() or self.encoding == UTF32:
            return line + 1, min(max(position.character, 0), len(text)) + 1
        units = 0
        for index, ch in enumerate(text):
            if units >= position.character:
                return line + 1, index + 1
            units += _width(ch, self.encoding)
        return line + 1, len(text) + 1

    def end(self) -> Position:
        """The position just past the last character of the text."""
        return self.position(len(self.lines), len(self.lines[-1]) + 1)
