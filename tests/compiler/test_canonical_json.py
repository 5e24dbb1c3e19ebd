"""The compiler's canonical JSON: byte-identical to the `rfc8785` library on any value."""

from __future__ import annotations

import json

import rfc8785
from hypothesis import given
from hypothesis import strategies as st
from prosec.compiler.canonical_json import canonical_json, token

from ..conftest import shared_dir

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=20,
)


@given(JSON)
def test_matches_rfc8785(value: object) -> None:
    try:
        expected = rfc8785.dumps(value)
    except Exception:  # values rfc8785 refuses (huge ints, lone surrogates) must not be faked
        try:
            canonical_json(value)
        except Exception:
            return
        raise AssertionError("accepted a value rfc8785 refuses") from None
    assert canonical_json(value) == expected


def test_reference_vectors() -> None:
    vectors = json.loads((shared_dir() / "conformance" / "reference-vectors.json").read_text())
    for case in vectors["canonical_json"]:
        value = eval(case["value_python_repr"])  # the vectors are Python literals by design
        if "lone surrogate" in case["name"]:
            continue  # the runtime's module handles lone surrogates; contract images have none
        assert canonical_json(value).decode() == case["expect"], case["name"]


def test_token() -> None:
    assert token({"b": 1, "a": 2}) == token({"a": 2, "b": 1})
    assert token({}).startswith("sha256:")
