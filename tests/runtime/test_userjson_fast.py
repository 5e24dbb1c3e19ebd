"""`userjson.loads` reads through orjson only when the result is the exact path's: the
same values of the same types, or the same refusal in the same words."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prosec.runtime import userjson
from prosec.runtime.userjson import JSONInputError, loads

_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(-(2**64), 2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)
# JSON number literals, valid and not, as a producer might write them
_NUMBERS = st.from_regex(r"\A-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,25})?([eE][+-]?[0-9]{1,4})?\Z")


def _same(one: Any, two: Any) -> bool:
    """Equal values of equal types all the way down (1, 1.0 and True are not the same)."""
    if type(one) is not type(two):
        return False
    if isinstance(one, list):
        return len(one) == len(two) and all(_same(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, dict):
        return list(one) == list(two) and all(_same(one[k], two[k]) for k in one)
    if isinstance(one, float):
        return repr(one) == repr(two)
    return bool(one == two)


def _outcome(read: Any, data: bytes | str) -> tuple[str, Any]:
    try:
        return "value", read(data)
    except JSONInputError as exc:
        return "refused", str(exc)


def _agree(data: bytes | str, max_depth: int = userjson.MAX_DEPTH) -> None:
    fast = _outcome(lambda d: loads(d, source="x", max_depth=max_depth), data)
    exact = _outcome(lambda d: userjson._exact(d, "x", max_depth), data)
    assert fast[0] == exact[0], (fast, exact)
    if fast[0] == "value":
        assert _same(fast[1], exact[1])
    else:
        assert fast[1] == exact[1]


@settings(max_examples=300, deadline=None)
@given(_VALUES, st.booleans(), st.sampled_from([None, 0, 2]))
def test_json_values_read_the_same(value: Any, ascii_only: bool, indent: int | None) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
    _agree(text)
    _agree(text.encode("utf-8", "surrogatepass"))


@settings(max_examples=400, deadline=None)
@given(_NUMBERS)
def test_number_literals_read_the_same(text: str) -> None:
    _agree(text)
    _agree(f'{{"n": [{text}]}}'.encode())


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40) | st.text(max_size=20))
def test_arbitrary_input_reads_or_is_refused_the_same(data: bytes | str) -> None:
    _agree(data)


@pytest.mark.parametrize("depth", [1, 99, 100, 101, 255, 256, 257, 300])
@pytest.mark.parametrize("limit", [100, 256])
def test_depth_is_decided_exactly(depth: int, limit: int) -> None:
    for text in (
        "[" * depth + "]" * depth,
        '{"a":' * depth + "1" + "}" * depth,
        '["[[[[", ' + "[" * (depth - 1) + "]" * (depth - 1) + "]",
        "[" * depth + '"]]]]"' + "]" * depth,
        "[" + "[]," * 200 + "[" * (depth - 1) + "]" * (depth - 1) + "]",
    ):
        _agree(text, max_depth=limit)
        _agree(text.encode(), max_depth=limit)


@pytest.mark.parametrize(
    "text",
    [
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775809",
        "[1234567890123456789012345]",
        '"1234567890123456789012"',
        "\ufeff1",
        b"\xef\xbb\xbf[1]",
        '"\\ud800"',
        b'"\xed\xa0\x80"',
        "1e400",
        "-1e400",
        "NaN",
        "[Infinity]",
        '{"a": 1, "a": 2}',
        "-0",
        "-0.0",
        "1E5",
        "0.1e-400",
        "0.12345678901234567890123",
        "[-12345678901234567890123]",
        '{"h": "sha256:ab1234567890123456789012", "n": 1}',
        '"1234567890123456789"',
        "[1e+1234567890123456789]",
        "[1.5e-1234567890123456789]",
        " 12345678901234567890",
    ],
)
def test_edge_cases_read_the_same(text: str | bytes) -> None:
    _agree(text)
