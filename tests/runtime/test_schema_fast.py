"""`schema_fast.certainly_valid` never says yes to a document jsonschema faults, and says
yes to the valid `prose.toml` files people write (so `prosec lint` skips jsonschema)."""

from __future__ import annotations

import math
import tomllib
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prosec.runtime.project_toml import SCHEMA as CONFIG
from prosec.runtime.schema_fast import certainly_valid
from prosec.runtime.schemas import load_schema, validate

from ..conftest import REPO

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(-2, 2)
    | st.sampled_from([math.inf, -math.inf, math.nan, 2.0, 2**64])
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)


def _resolve(reference: str, root: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    document, _, pointer = reference.partition("#")
    if document:
        root = load_schema(document)
    target: Any = root
    for part in pointer.strip("/").split("/"):
        target = target[part]
    return target, root


@st.composite
def _instance(
    draw: st.DrawFn, schema: Any, root: dict[str, Any], noisy: bool, depth: int = 0
) -> Any:
    """A value shaped by `schema`: valid but for the pattern-matched strings, or, when
    `noisy`, broken here and there."""
    if depth > 8 or not isinstance(schema, dict) or (noisy and draw(st.integers(0, 29)) == 0):
        return draw(_JSON)  # a random value in place of what the schema wants
    if "$ref" in schema:
        target, root = _resolve(schema["$ref"], root)
        return draw(_instance(target, root, noisy, depth + 1))
    for combinator in ("oneOf", "anyOf"):
        if combinator in schema:
            return draw(
                _instance(draw(st.sampled_from(schema[combinator])), root, noisy, depth + 1)
            )
    if "enum" in schema:
        return draw(st.sampled_from(schema["enum"]))
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = draw(st.sampled_from(kind))
    if kind == "object" or "properties" in schema:
        result: dict[str, Any] = {}
        for key, sub in schema.get("properties", {}).items():
            if key in schema.get("required", ()) or draw(st.booleans()):
                result[key] = draw(_instance(sub, root, noisy, depth + 1))
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and draw(st.booleans()):
            names = schema.get("propertyNames", {})
            name = draw(st.from_regex(names["pattern"])) if "pattern" in names else "x-y"
            result[name] = draw(_instance(extra, root, noisy, depth + 1))
        if noisy and draw(st.integers(0, 9)) == 0:
            result[draw(st.text(max_size=5))] = draw(_JSON)  # perhaps an unknown key
        return result
    if kind == "array":
        item = schema.get("items", {})
        return draw(st.lists(_instance(item, root, noisy, depth + 1), max_size=3))
    if kind == "string":
        if "pattern" in schema:
            return draw(st.from_regex(schema["pattern"]) | st.text(max_size=3))
        return draw(st.text(min_size=schema.get("minLength", 0), max_size=6))
    if kind == "integer":
        return draw(st.integers(-2, 100))
    if kind == "number":
        return draw(st.floats(-2, 100) | st.integers(-2, 100) | st.sampled_from([math.inf]))
    if kind == "boolean":
        return draw(st.booleans() | st.integers(0, 1)) if noisy else draw(st.booleans())
    return draw(_JSON)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_yes_is_never_wrong(data: st.DataObject) -> None:
    schema = load_schema(CONFIG)
    document = data.draw(_instance(schema, schema, data.draw(st.booleans())))
    if certainly_valid(document, CONFIG):
        assert validate(document, CONFIG) == []


def test_the_valid_example_files_need_no_jsonschema() -> None:
    found = 0
    for path in sorted((REPO / "corpus").rglob("prose.toml")):
        document = tomllib.loads(path.read_text("utf-8"))
        valid = validate(document, CONFIG) == []
        assert certainly_valid(document, CONFIG) is valid, path
        found += valid
    assert found >= 10


def test_doubtful_values_are_left_to_jsonschema() -> None:
    import datetime

    assert not certainly_valid({"run": {"jobs": datetime.date(2026, 1, 1)}}, CONFIG)
    assert not certainly_valid({"run": {"jobs": True}}, CONFIG)  # a boolean is no integer
    assert not certainly_valid({"run": {"timeout": math.inf}}, CONFIG)  # nor inf a number
    assert not certainly_valid({"lint": {"select": ["no_such_code"]}}, CONFIG)
    assert certainly_valid({"lint": {"strict": True}}, CONFIG)
    assert certainly_valid({}, CONFIG)
