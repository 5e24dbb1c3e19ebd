"""The manifest writer: orjson's bytes where they equal the standard library's, else the
standard library's, so the byte form never depends on which encoder ran."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from prosec.compiler.codegen.intent import _has_float, canonical_dumps, dumps

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=["Cs"]))
)
_documents = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(max_size=8), _documents, max_size=5))
def test_dumps_equals_the_standard_library(document: dict[str, Any]) -> None:
    assert dumps(document) == canonical_dumps(document)


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False), st.text())
def test_a_float_anywhere_is_seen(number: float, text: str) -> None:
    document = {"a": [{"b": text, "c": [number]}], "d": f"{number}"}
    assert _has_float(canonical_dumps(document))
    assert dumps(document) == canonical_dumps(document)


def test_text_that_looks_like_a_number_is_not_a_float() -> None:
    document = {"a": "1.5", "b": ["x 2.5e3", 7, -3], "c": "line: 1.0\n2.0"}
    assert not _has_float(dumps(document))
    assert dumps(document) == canonical_dumps(document)
