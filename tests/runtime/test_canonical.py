"""Canonical JSON, tokens and OPWM1 frames against our recorded vectors and rfc8785."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st
from prosec.runtime import canonical
from prosec.runtime.canonical import (
    FrameError,
    PathError,
    canonical_json,
    canonical_json_slow,
    content_address,
    decode_frame,
    encode_frame,
    normalize_path,
    token,
)
from prosec.runtime.userjson import JSONInputError

from ..conftest import DATA

VECTORS: dict[str, Any] = json.loads((DATA / "vectors.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("vector", VECTORS["canonical_json"], ids=lambda v: v["name"][:40])
def test_canonical_vectors(vector: dict[str, Any]) -> None:
    value = json.loads(vector["input"])
    expected = vector["canonical"].encode("utf-8")
    assert canonical_json(value) == expected
    assert canonical_json_slow(value) == expected
    # the canonical form is a fixed point: parsing it and serializing again gives the same
    assert canonical_json(json.loads(vector["canonical"])) == expected


@pytest.mark.parametrize("vector", VECTORS["receipt_hashes"], ids=lambda v: v["name"])
def test_receipt_vectors(vector: dict[str, Any]) -> None:
    body = vector["receipt"]
    assert canonical_json(body) == vector["canonical"].encode()
    assert token(body) == vector["content_hash"]


@pytest.mark.parametrize("vector", VECTORS["frames"], ids=lambda v: v["name"])
def test_frame_vectors(vector: dict[str, Any]) -> None:
    files = {path: text.encode() for path, text in vector["files"].items()}
    assert encode_frame(files).hex() == vector["frame_hex"]
    assert content_address(files) == vector["address"]
    assert decode_frame(encode_frame(files)) == files


def test_design_facts() -> None:
    assert canonical_json({"b": 1, "a": 2}) == b'{"a":2,"b":1}'
    assert content_address({}) == (
        "sha256:e59ed80133c208bf8e8264c96c5bbe0d36aa073fb969671ec6b752bffb7b08e6"
    )


def test_large_integers_keep_their_digits() -> None:
    # Divergence from the reference (documented): exact digits, no collision.
    assert canonical_json(123456789012345678901) == b"123456789012345678901"
    assert token(123456789012345678901) != token(123456789012345678902)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, {1, 2}, b"x", object()])
def test_non_json_values_are_refused(bad: Any) -> None:
    with pytest.raises(canonical.CanonicalError):
        canonical_json(bad)


# JSON values within what RFC 8785 libraries accept: no lone surrogates, safe integers.
_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=("Cs",)))
)
_json_values = st.recursive(
    _json_scalars,
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(
            st.text(st.characters(blacklist_categories=("Cs",))), children, max_size=5
        )
    ),
    max_leaves=30,
)


@settings(max_examples=600, deadline=None)
@given(_json_values)
def test_fast_path_matches_rfc8785(value: Any) -> None:
    assert canonical_json(value) == rfc8785.dumps(value)


@settings(max_examples=300, deadline=None)
@given(_json_values)
def test_slow_path_matches_rfc8785(value: Any) -> None:
    assert canonical_json_slow(value) == rfc8785.dumps(value)


_tricky_floats = st.sampled_from(
    [
        1e21,
        1e-7,
        -0.0,
        0.30000000000000004,
        1e16,
        5e-324,
        1.2345678901234568e20,
        1.5,
        100.0,
        1e-5,
        123456.0,
        9007199254740993.0,
        1.7976931348623157e308,
        2.5e-6,
        0.000001,
    ]
) | st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=500, deadline=None)
@given(st.lists(_tricky_floats, max_size=8))
def test_numbers_match_rfc8785(value: list[float]) -> None:
    assert canonical_json(value) == rfc8785.dumps(value)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.text(alphabet="a\ue000\uffff😀𝄞é", max_size=3), st.integers(-1000, 1000), max_size=6
    )
)
def test_utf16_key_order(value: dict[str, int]) -> None:
    assert canonical_json(value) == rfc8785.dumps(value)


def test_lone_surrogates_are_escaped_like_the_reference() -> None:
    assert canonical_json(["\ud800", {"\udc00": 1}]) == b'["\\ud800",{"\\udc00":1}]'


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("a\\b", "a/b"), ("./a//b/.", "a/b"), ("published/x.json", "published/x.json")],
)
def test_normalize_path(raw: str, expected: str) -> None:
    assert normalize_path(raw) == expected


@pytest.mark.parametrize("raw", ["../x", "a/../../b", "/etc/passwd", "C:/x", "", ".", "a\x00"])
def test_normalize_path_refuses(raw: str) -> None:
    with pytest.raises(PathError):
        normalize_path(raw)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.from_regex(r"[a-z]{1,4}(/[a-z0-9._-]{1,5}){0,2}", fullmatch=True).filter(
            lambda p: ".." not in p.split("/") and "." not in p.split("/")
        ),
        st.binary(max_size=40),
        max_size=6,
    )
)
def test_frame_round_trip(files: dict[str, bytes]) -> None:
    frame = encode_frame(files)
    assert encode_frame(decode_frame(frame)) == frame
    assert decode_frame(frame) == {normalize_path(p): c for p, c in files.items()}


def test_frame_write_order_does_not_matter() -> None:
    a = encode_frame([("b.json", b"1"), ("a.json", b"2")])
    b = encode_frame([("a.json", b"2"), ("b.json", b"1")])
    assert a == b


@pytest.mark.parametrize("cut", [3, 7, 12, 20])
def test_truncated_frames_are_refused(cut: int) -> None:
    frame = encode_frame({"truth.json": b"{}", "x": b"abc"})
    with pytest.raises(FrameError):
        decode_frame(frame[:cut])


# Strings built from the characters that could fool the in-place float fix-up.
_adversarial_text = st.text(alphabet='5.0e-+,:[]{}"\\ 7', max_size=12)
_adversarial = st.recursive(
    _tricky_floats | _adversarial_text | st.integers(-10, 10),
    lambda children: (
        st.lists(children, max_size=6) | st.dictionaries(_adversarial_text, children, max_size=4)
    ),
    max_leaves=25,
)


@pytest.mark.slow  # 1,500 examples
@settings(max_examples=1500, deadline=None)
@given(_adversarial)
def test_float_fix_up_never_touches_strings(value: Any) -> None:
    assert canonical_json(value) == rfc8785.dumps(value)


@settings(max_examples=600, deadline=None)
@given(_json_values)
def test_orjson_path_matches_rfc8785(value: Any) -> None:
    assert canonical_json(value, finite=True) == rfc8785.dumps(value)


@settings(max_examples=800, deadline=None)
@given(_adversarial)
def test_orjson_path_float_fix_up(value: Any) -> None:
    assert canonical_json(value, finite=True) == rfc8785.dumps(value)


def test_orjson_path_falls_back_for_what_it_cannot_encode() -> None:
    value = {"big": 123456789012345678901, "s": "\ud800", "f": 5.0}
    expected = b'{"big":123456789012345678901,"f":5,"s":"\\ud800"}'
    assert canonical_json(value, finite=True) == canonical_json_slow(value) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("1e400", "out of range"),
        ("-1E400", "out of range"),
        ('{"x": [1.5e999]}', "out of range"),
        ("NaN", "NaN is not a JSON number"),
        ("[Infinity]", "Infinity is not a JSON number"),
        ("-Infinity", "-Infinity is not a JSON number"),
        ("7" * 5000, "digits"),
        ("[" * 101 + "]" * 101, "nested deeper than 100 levels"),
        ('{"a":' * 101 + "1" + "}" * 101, "nested deeper than 100 levels"),
        ("[" * 100_000 + "]" * 100_000, "nested deeper than 100 levels"),
    ],
)
def test_strict_reading_refuses_what_has_no_canonical_form(text: str, problem: str) -> None:
    for data in (text, text.encode()):
        with pytest.raises(JSONInputError, match=problem):
            canonical.loads_strict(data)


def test_strict_reading_keeps_what_does() -> None:
    assert canonical.loads_strict("[" * 100 + "]" * 100) is not None
    assert canonical.loads_strict("1e-400") == 0.0  # underflow is a finite number
    assert canonical.loads_strict('{"n": 12345678901234567890123}') == {
        "n": 12345678901234567890123
    }
    with pytest.raises(JSONInputError, match="not JSON"):
        canonical.loads_strict("{bad")


@given(_json_values)
@settings(max_examples=200, deadline=None)
def test_strict_reading_round_trips_canonical_json(value: Any) -> None:
    data = canonical_json(value)
    assert canonical_json(canonical.loads_strict(data)) == data


def test_json_depth() -> None:
    assert [canonical.json_depth(v) for v in (1, [], {}, [[]], {"a": {"b": [1]}})] == [
        0,
        1,
        1,
        2,
        3,
    ]
    assert canonical.json_depth([[[[[]]]]], limit=2) == 3  # stops just past the limit
