"""Span ↔ LSP position conversion in UTF-16 (and UTF-8, UTF-32) code units."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prosec.compiler.ir import Span
from prosec.compiler.lsp.positions import UTF8, UTF16, UTF32, LineIndex, Position, Range

TEXT = "plain\ncafé ☕ x\n😀 after\n"


def _span(line: int, column: int, end_line: int, end_column: int) -> Span:
    return Span(path="a", line=line, column=column, end_line=end_line, end_column=end_column)


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [(UTF16, (2, 3)), (UTF8, (4, 5)), (UTF32, (1, 2))],
)
def test_astral_characters_count_per_encoding(encoding: str, expected: tuple[int, int]) -> None:
    index = LineIndex(TEXT, encoding)
    # column 2 of line 3 is just after the emoji; column 3 after the space
    assert index.position(3, 2) == Position(2, expected[0])
    assert index.position(3, 3) == Position(2, expected[1])


def test_bmp_characters_are_one_utf16_unit_but_more_utf8_bytes() -> None:
    span = _span(2, 1, 2, 8)  # "café ☕ " … up to before "x"
    assert LineIndex(TEXT, UTF16).range(span) == Range(Position(1, 0), Position(1, 7))
    assert LineIndex(TEXT, UTF8).range(span) == Range(Position(1, 0), Position(1, 10))


def test_positions_clamp_into_the_text() -> None:
    index = LineIndex(TEXT)
    assert index.position(0, 0) == Position(0, 0)
    assert index.position(2, 99) == Position(1, 8)
    assert index.position(99, 1) == Position(3, 0)
    assert index.range(_span(2, 5, 1, 1)) == Range(Position(1, 4), Position(1, 4))
    assert index.end() == Position(3, 0)


def test_point_inverts_position_even_inside_a_surrogate_pair() -> None:
    index = LineIndex(TEXT)
    assert index.point(Position(2, 0)) == (3, 1)
    assert index.point(Position(2, 1)) == (3, 2)  # between the two halves of 😀: after it
    assert index.point(Position(2, 2)) == (3, 2)
    assert index.point(Position(2, 3)) == (3, 3)
    assert index.point(Position(9, 9)) == (4, 1)


def test_unknown_encodings_are_rejected() -> None:
    with pytest.raises(ValueError):
        LineIndex("x", "utf-7")


@given(
    st.lists(st.text(alphabet=st.characters(blacklist_characters="\n\r"), max_size=12), min_size=1),
    st.sampled_from([UTF8, UTF16, UTF32]),
    st.data(),
)
def test_point_and_position_round_trip(
    lines: list[str], encoding: str, data: st.DataObject
) -> None:
    index = LineIndex("\n".join(lines), encoding)
    line = data.draw(st.integers(1, len(lines)))
    column = data.draw(st.integers(1, len(lines[line - 1]) + 1))
    assert index.point(index.position(line, column)) == (line, column)


def test_a_lone_surrogate_counts_as_three_utf8_bytes() -> None:
    # JSON from a client can decode to a lone surrogate; it must not crash the server
    index = LineIndex("00\ud800x", UTF8)
    assert index.position(1, 4) == Position(0, 5)
    assert index.point(Position(0, 5)) == (1, 4)
