"""The one reader for JSON prosec did not write: strict numbers, bounded depth and size,
regular files only, and every refusal a JSONInputError that names its source."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prosec.runtime.userjson import (
    MAX_DEPTH,
    JSONInputError,
    loads,
    read_file,
    read_limited,
)

REFUSED = {
    "NaN": ("[NaN]", "NaN is not a JSON number"),
    "Infinity": ('{"x": -Infinity}', "-Infinity is not a JSON number"),
    "1e400": ("1e400", "1e400 is out of range"),
    "5,000 digits": ("9" * 5000, "5000 digits"),
    "3,000 levels": ("[" * 3000 + "]" * 3000, f"nested deeper than {MAX_DEPTH} levels"),
    "100k levels": ("{" * 1 + '"a":' + "[" * 100_000 + "]" * 100_000 + "}", "nested deeper"),
    "malformed": ('{"x": ', "not JSON (line 1 column 7)"),
    "not UTF-8": (b'"\xff"', "not UTF-8 (byte 1"),
}


@pytest.mark.parametrize(("text", "says"), REFUSED.values(), ids=REFUSED.keys())
def test_refused_input_names_its_source(text: str | bytes, says: str) -> None:
    with pytest.raises(JSONInputError) as caught:
        loads(text, source="--data")
    assert str(caught.value).startswith("--data: ") and says in str(caught.value)


def test_what_is_accepted() -> None:
    depth = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert loads(depth) is not None
    assert loads('["[[[[[[", 1e-400, 1e308, -0.5]') == ["[[[[[[", 0.0, 1e308, -0.5]
    assert loads("9" * 1000) == int("9" * 1000)
    assert loads('"\\ud800"') == "\ud800"  # lone surrogates: canonical JSON escapes them


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
        max_leaves=20,
    )
)
def test_any_json_value_round_trips(value: object) -> None:
    import json

    assert loads(json.dumps(value)) == value


def test_read_limited_refuses_what_is_not_a_small_regular_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    (tmp_path / "big").write_bytes(b"x" * 101)
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    cases = {
        "fifo": "not a regular file",
        "dir": "a directory",
        "big": "too large (101 bytes; the limit is 100)",
        "loop": "cannot read",
        "missing": "No such file",
    }
    for name, says in cases.items():
        with pytest.raises(JSONInputError) as caught:
            read_limited(tmp_path / name, 100)
        assert str(caught.value).startswith(str(tmp_path / name)) and says in str(caught.value)
    with pytest.raises(JSONInputError, match=r"^cannot read: a directory$"):
        read_limited(tmp_path / "dir", 100, what="")
    with pytest.raises(JSONInputError, match="not a regular file"):
        read_limited(Path("/dev/zero"), 100)
    (tmp_path / "ok.json").write_text('{"a": [1]}')
    assert read_file(tmp_path / "ok.json", 100) == {"a": [1]}


@given(st.text(alphabet='"\\ab[]{}\n', max_size=60))
def test_the_depth_check_skips_the_same_strings_as_the_plain_pattern(text: str) -> None:
    """The unrolled string pattern the depth check strips strings with matches exactly
    what the plain alternation does, on any text (valid JSON or not)."""
    import re

    from prosec.runtime import userjson

    plain = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
    assert userjson._STRING.sub("", text) == plain.sub("", text)
