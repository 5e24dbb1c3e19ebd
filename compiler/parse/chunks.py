"""Re-parsing an edited file chunk by chunk: the `##` chunks a keystroke did not touch keep
their contracts.

A file's body is cut before each line that starts with `## ` at column 0 (a candidate
contract heading). Each chunk is parsed alone, padded with blank lines so that line
numbers, spans and line clamping are those of the whole file, and together with the
candidate heading that ends it. The cut is sound only if markdown-it, parsing the
chunk, makes that last line a level-2 heading at the top level: then no block (a
fence, an HTML block, a list …) was open across the cut, the whole-file parse is
at the top level there too, and what follows the cut parses the same with or without
what precedes it. When the check fails (an unclosed fence, say), the rest of the file
is parsed as one chunk. So the result equals `parse_source` exactly; the tests compare
the two over the corpus and random edits.

A chunk's result (its frozen contracts, fences and diagnostics) is kept under its text,
its first line, the file's path and its frontmatter text, for the next parse of that
path only: the language server re-parses the chunk being typed in and reuses the rest.
"""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic
from ..ir import Contract, Fence, SourceFile, Span
from ..values import value
from .builders import freeze_contract
from .markdown import _markdown, _Parser

__all__ = ["Reparser"]


@value
class _Chunk:
    contracts: tuple[Contract, ...]
    fences: tuple[Fence, ...]
    diagnostics: tuple[Diagnostic, ...]


_Key = tuple[str, int, str, bool]  # frontmatter text, first line, chunk text, runs to the end


class Reparser:
    """`parse_source` for files parsed again and again (the language server's buffers)."""

    def __init__(self) -> None:
        self._kept: dict[str, dict[_Key, _Chunk]] = {}

    def __call__(self, path: str, text: str) -> tuple[SourceFile, list[Diagnostic]]:
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        parser = _ChunkedParser(path, text, self._kept.get(path, {}))
        source = parser.parse()
        self._kept[path] = parser.used
        return source, parser.diagnostics


def _cuts(lines: list[str], first: int) -> list[int]:
    """1-based numbers of the lines after `first` that may open a `##` contract."""
    return [
        number
        for number, line in enumerate(lines, start=1)
        if number > first and line.startswith("##") and (len(line) == 2 or line[2] in " \t")
    ]


class _ChunkedParser(_Parser):
    def __init__(self, path: str, text: str, kept: dict[_Key, _Chunk]) -> None:
        super().__init__(path, text)
        self.kept = kept
        self.used: dict[_Key, _Chunk] = {}

    def _contracts(
        self,
        body_text: str,
        frontmatter: dict[str, Any],
        fm_spans: dict[str, Span],
        fm_end: int,
    ) -> tuple[Contract, ...]:
        body = body_text.split("\n")
        # the frontmatter lines are blank in `body`; its text goes into every chunk's key
        fm_text = "\n".join(self.lines[:fm_end])
        cuts = _cuts(body, fm_end)
        total = len(body)
        start, position = 1, 0
        contracts: list[Contract] = []
        while start <= total:
            chunk = None
            stop = next((c for c in cuts if c > start), None)
            if stop is not None:
                chunk = self._chunk(body, fm_text, start, stop, position, frontmatter, fm_spans)
            if chunk is None:  # the last chunk, or a cut that is not sound: the rest whole
                stop = None
                chunk = self._chunk(body, fm_text, start, None, position, frontmatter, fm_spans)
            assert chunk is not None
            contracts.extend(chunk.contracts)
            self.all_fences.extend(chunk.fences)
            self.diagnostics.extend(chunk.diagnostics)
            position += len(chunk.contracts) or 1
            if stop is None:
                break
            start = stop
        return tuple(contracts)

    def _chunk(
        self,
        body: list[str],
        fm_text: str,
        start: int,
        stop: int | None,
        position: int,
        frontmatter: dict[str, Any],
        fm_spans: dict[str, Span],
    ) -> _Chunk | None:
        """The chunk from line `start` up to the cut at line `stop` (None: to the end);
        None when the cut is not sound."""
        last = len(body) if stop is None else stop
        text = "\n".join(body[start - 1 : last])
        key = (fm_text, start, text, stop is None)
        found = self.kept.get(key) or self.used.get(key)
        if found is None:
            found = _parse_chunk(self, text, start, stop, position, frontmatter, fm_spans)
            if found is None:
                return None
        self.used[key] = found
        return found


def _parse_chunk(
    parser: _Parser,
    text: str,
    start: int,
    stop: int | None,
    position: int,
    frontmatter: dict[str, Any],
    fm_spans: dict[str, Span],
) -> _Chunk | None:
    total = len(parser.lines)
    shown = text.count("\n") + 1
    # the whole file's line numbers and line count: blank lines before and after
    padded = "\n" * (start - 1) + text + "\n" * (total - (start - 1) - shown)
    tokens = _markdown().parse(padded)
    if stop is not None and not _ends_with_cut(tokens, stop):
        return None
    part = _Parser(parser.path, "")
    part.at, part.lines = parser.at, parser.lines  # spans read the file's own lines
    builders = part._walk(tokens)
    if position > 0:
        builders = builders[1:]  # the walk's file-level contract: nothing before the cut
    if stop is not None:
        builders = builders[:-1]  # the contract the next chunk's heading opens
    return _Chunk(
        contracts=tuple(
            freeze_contract(part.at, b, position + i, frontmatter, fm_spans)
            for i, b in enumerate(builders)
        ),
        fences=tuple(part.all_fences),
        diagnostics=tuple(part.diagnostics),
    )


def _ends_with_cut(tokens: list[Any], stop: int) -> bool:
    """Whether the chunk's last block is a top-level `##` heading on line `stop`."""
    if len(tokens) < 3:
        return False
    opening = tokens[-3]
    return (
        opening.type == "heading_open"
        and opening.tag == "h2"
        and opening.level == 0
        and bool(opening.map)
        and opening.map[0] == stop - 1
        and tokens[-1].type == "heading_close"
    )
