"""Line-indexed source text: 1-based spans clamped into the file."""

from __future__ import annotations

from collections.abc import Sequence

from ..ir import Span


class Lines:
    """The lines of one file and the span arithmetic every parse step shares."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.lines = text.split("\n")

    def line_text(self, line: int) -> str:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    def span(self, line: int, column: int, end_line: int, end_column: int) -> Span:
        """A span clamped into the file: YAML counts `\\u2028` and friends as line breaks,
        so positions it reports can fall past the lines markdown-it sees."""
        last = max(len(self.lines), 1)
        line = min(max(line, 1), last)
        end_line = min(max(end_line, line), last)
        column = min(max(column, 1), len(self.line_text(line)) + 1)
        end_column = min(max(end_column, 1), len(self.line_text(end_line)) + 1)
        if end_line == line:
            end_column = max(end_column, column)
        return Span(
            path=self.path, line=line, column=column, end_line=end_line, end_column=end_column
        )

    def block_span(self, token_map: Sequence[int] | None) -> Span:
        """The span of a block: first non-blank to last non-blank line of its map."""
        if not token_map:
            return self.span(1, 1, 1, 1)
        start, end = token_map[0] + 1, max(token_map[1], token_map[0] + 1)
        end = min(end, len(self.lines))
        while end > start and not self.line_text(end).strip():
            end -= 1
        first = self.line_text(start)
        column = len(first) - len(first.lstrip()) + 1
        return self.span(start, column, end, len(self.line_text(end)) + 1)

    def region_span(self, start: int, end: int) -> Span:
        """A whole-lines span from `start` to the last non-blank line at or before `end`."""
        end = max(min(end, len(self.lines)), start)
        while end > start and not self.line_text(end).strip():
            end -= 1
        return self.span(start, 1, end, len(self.line_text(end)) + 1)

    def find_in_line(self, line: int, needle: str, start_col: int = 1) -> Span | None:
        text = self.line_text(line)
        index = text.find(needle, max(start_col - 1, 0))
        if index < 0:
            return None
        return self.span(line, index + 1, line, index + 1 + len(needle))
