"""The flattened draft 2020-12 meta-schema gives jsonschema's own `check_schema` verdict."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st
from prosec.runtime.schemas import check_schema

KEYWORDS = [
    "type",
    "properties",
    "items",
    "prefixItems",
    "required",
    "enum",
    "const",
    "minimum",
    "maxLength",
    "minItems",
    "pattern",
    "format",
    "$ref",
    "$defs",
    "definitions",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "additionalProperties",
    "patternProperties",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "contains",
    "$id",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "unevaluatedProperties",
    "contentSchema",
    "title",
    "description",
    "default",
    "deprecated",
    "uniqueItems",
    "multipleOf",
    "$comment",
]
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-3, max_value=3)
    | st.sampled_from(["string", "object", "nope", "#", "#/$defs/a", "a b", "^a$", "(", "uri"])
)


def schemas() -> st.SearchStrategy[Any]:
    """Objects of meta-schema keywords, nested: mostly near-valid schemas."""
    keys = st.sampled_from(KEYWORDS) | st.sampled_from(["a", "b"])
    return st.recursive(
        st.dictionaries(keys, SCALARS, max_size=3),
        lambda inner: st.dictionaries(
            keys, inner | st.lists(inner, max_size=2) | SCALARS, max_size=4
        ),
        max_leaves=12,
    )


def reference(schema: Any) -> bool:
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError:
        return False
    return True


@settings(max_examples=400, deadline=None)
@given(schemas())
def test_same_verdict_as_jsonschema(schema: Any) -> None:
    assert (check_schema(schema) is None) == reference(schema)


def test_known_verdicts() -> None:
    assert check_schema({"type": "object", "properties": {"a": {"type": "string"}}}) is None
    assert check_schema(True) is None
    assert check_schema({"type": 5}) == "5 is not valid under any of the given schemas"
    assert check_schema({"properties": {"a": {"minLength": -1}}}) is not None
    assert check_schema({"$defs": {"a": {"required": [1]}}}) is not None


def test_legacy_dependencies_keyword_resolves_inside_the_flat_meta_schema() -> None:
    # the meta-schema's `dependencies` refers to `meta/validation#/$defs/stringArray`;
    # hypothesis found that the flattened form could not resolve it (and tried the network)
    assert check_schema({"dependencies": {"a": ["b"]}}) is None
    assert check_schema({"dependencies": {"type": None}}) == reference_message(
        {"dependencies": {"type": None}}
    )


def reference_message(schema: Any) -> str | None:
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return str(exc.message)
    return None


def test_a_remote_ref_in_a_truth_schema_is_a_problem_not_a_download() -> None:
    from prosec.runtime.schemas import validate_with

    found = validate_with({"a": 1}, {"$ref": "http://127.0.0.1:9/schema.json"})
    assert [p.path for p in found] == ["$"]
    assert "cannot be resolved offline" in found[0].message
