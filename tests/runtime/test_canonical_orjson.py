"""The orjson path of canonical JSON at its edges: float tokens, large integers, UTF-16
key order, NaN and infinity, and non-JSON types, each against rfc8785 or the exact
pure-Python encoder."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import math
import uuid
from typing import Any

import orjson
import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st
from prosec.runtime import canonical
from prosec.runtime.canonical import CanonicalError, canonical_json, canonical_json_slow

# Floats around every boundary where the ECMAScript form changes: integral floats near
# 2**53 and 1e16 (`X.0`), 1e21 (digits → exponent), 1e-6 / 1e-7 (decimal → exponent).
_boundaries = [2.0**53, 1e16, 1e21, 1e-6, 1e-7, 1.0, 5e-324, 1.7976931348623157e308]
_near = [math.nextafter(b, d) for b in _boundaries for d in (0.0, math.inf)]
_edge_floats = st.sampled_from(
    [b * k for b in _boundaries + [x for x in _near if math.isfinite(x)] for k in (1.0, -1.0)]
    + [-0.0, 0.0, 9.999999999999999e20, 123456789012345680000.0, 99999999999999990000.0]
) | st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=1000, deadline=None)
@given(st.lists(_edge_floats, max_size=6))
def test_orjson_float_tokens_are_rewritten_to_ecmascript(value: list[float]) -> None:
    expected = rfc8785.dumps(value)
    assert canonical_json(value) == expected
    assert canonical_json(value, finite=True) == expected
    assert canonical._orjson_fast(value, trusted=False) == expected  # the orjson path itself


@settings(max_examples=400, deadline=None)
@given(_edge_floats, st.text(alphabet="0123456789.e+-", max_size=10))
def test_float_like_strings_next_to_floats_are_left_alone(number: float, text: str) -> None:
    value = {text: [text, number, {"k": text}], "n": number}
    assert canonical_json(value) == rfc8785.dumps(value)


_integral = st.integers(-(10**15), 10**15).map(float).filter(lambda x: x != 0 or str(x) == "0.0")


@settings(max_examples=600, deadline=None)
@given(
    st.lists(_integral, min_size=1, max_size=4),
    st.lists(st.text(alphabet='0123456789.,:[]{}"\\ x', max_size=12), max_size=4),
)
def test_point_zero_tokens_beside_quoted_lookalikes(numbers: list[float], texts: list[str]) -> None:
    # no exponent and no -0.0: the fast `.0` path, where only string delimiters (after
    # escapes) tell a `1.0,` inside a string from a float token
    value = {text: [text, *numbers, {"k": text}] for text in texts} or {"n": numbers}
    value["n"] = [*texts, *numbers]
    data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    assert canonical._drop_point_zeros(data) == canonical._fix_floats(data)
    assert canonical_json(value) == rfc8785.dumps(value)


@settings(max_examples=400, deadline=None)
@given(
    st.integers(min_value=2**53, max_value=2**70)
    | st.integers(min_value=-(2**70), max_value=-(2**53))
)
def test_integers_beyond_two_to_the_53_keep_their_digits(number: int) -> None:
    # rfc8785 refuses them; the documented choice is exact digits, on every path
    value = {"n": number, "l": [number, 1.0]}
    expected = b'{"l":[%d,1],"n":%d}' % (number, number)
    assert canonical_json(value) == canonical_json(value, finite=True) == expected
    assert canonical_json_slow(value) == expected


_high_bmp = st.characters(min_codepoint=0xE000, max_codepoint=0xFFFF, blacklist_categories=("Cs",))
_astral = st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF)
_key_text = st.text(_high_bmp | _astral | st.sampled_from("a\x7f\u00e9\u4e00"), max_size=3)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(_key_text, st.integers(-3, 3) | st.floats(-2, 2), max_size=6))
def test_keys_sort_by_utf16_code_units(value: dict[str, Any]) -> None:
    expected = rfc8785.dumps(value)
    assert canonical_json(value) == expected
    assert canonical_json(value, finite=True) == expected
    assert canonical_json({"outer": [value]}) == rfc8785.dumps({"outer": [value]})


def test_orjson_alone_would_sort_these_keys_wrongly() -> None:
    value = {"\ue000": 1, "\U00010000": 2}
    # UTF-16: U+10000 is D800 DC00, which sorts before E000; code points say otherwise
    assert canonical_json(value) == rfc8785.dumps(value) == '{"𐀀":2,"\ue000":1}'.encode()
    assert orjson.dumps(value, option=orjson.OPT_SORT_KEYS) != canonical_json(value)


_nonfinite = st.sampled_from([math.nan, math.inf, -math.inf])
_trees = st.recursive(
    st.none() | st.integers(-5, 5) | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(_trees, _nonfinite, st.randoms(use_true_random=False))
def test_nan_and_infinity_anywhere_are_refused(tree: Any, bad: float, rng: Any) -> None:
    # orjson writes them as null; the read-back must catch them wherever they hide
    def plant(node: Any) -> Any:
        if isinstance(node, list) and node and rng.random() < 0.5:
            return [*node[:-1], plant(node[-1])]
        if isinstance(node, dict) and node and rng.random() < 0.5:
            key = sorted(node)[0]
            return {**node, key: plant(node[key])}
        return [node, bad] if rng.random() < 0.5 else {"x": bad, "y": node}

    with pytest.raises(CanonicalError):
        canonical_json(plant(tree))


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int


@pytest.mark.parametrize(
    "bad",
    [
        uuid.UUID(int=7),
        Colour.RED,
        Point(1),
        datetime.date(2026, 1, 1),
        datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC),
        {"nested": [uuid.UUID(int=7)]},
        {"nested": {"c": Colour.RED}},
        {1: "int key"},
        2**64,  # beyond orjson; exact digits are accepted below
    ][:-1],
)
def test_types_orjson_would_encode_are_refused(bad: Any) -> None:
    with pytest.raises(CanonicalError):
        canonical_json(bad)


def test_the_default_path_is_orjson_for_plain_json() -> None:
    value = {"a": [1, 2.5, None, True, "x\u00e9"], "b": {"c": 1e21, "d": -0.0}}
    assert canonical._orjson_fast(value, trusted=False) == rfc8785.dumps(value)
    assert canonical._orjson_fast((1, 2), trusted=False) is None  # read back as a list
    assert canonical_json((1, 2)) == b"[1,2]"
    assert canonical_json(2**64) == b"18446744073709551616"
