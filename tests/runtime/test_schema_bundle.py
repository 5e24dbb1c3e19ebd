"""The bundled schemas `validate` uses judge every document as the schemas as written do."""

from __future__ import annotations

import copy
import json
import re
import tomllib
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prosec.runtime.receipts import build_receipt, content_hash
from prosec.runtime.schemas import _bundle, _registry, validate

from ..conftest import CORPUS, REPO

SNAPSHOTS = REPO / "tests" / "compiler" / "__snapshots__" / "test_corpus_intents"
# schemas whose `kind`-discriminated oneOf the bundler rewrites to if/then: the same
# documents pass, but a failing predicate is explained by its own branch, not all six
REWRITTEN = ("compiled-intent.schema.json", "validator.schema.json")


def readme_tomls() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^```toml\n(.*?)^```", text, flags=re.M | re.S)


@cache
def documents() -> tuple[tuple[str, Any], ...]:
    """(schema, document) for every document the tests know: the corpus's compiled intents
    and the specs and validators inside them, every prose.toml, built receipts."""
    found: list[tuple[str, Any]] = []
    for path in sorted(SNAPSHOTS.glob("*.json")):
        intent = json.loads(path.read_text(encoding="utf-8"))
        found.append(("compiled-intent.schema.json", intent))
        found += [("canonicalizer-spec.schema.json", c["spec"]) for c in intent["canonicalizers"]]
        found += [("validator.schema.json", p["validator"]) for p in intent["postconditions"]]
    for path in sorted(CORPUS.rglob("prose.toml")):
        found.append(("config.schema.json", tomllib.loads(path.read_text(encoding="utf-8"))))
    for block in readme_tomls():
        found.append(("config.schema.json", tomllib.loads(block)))
    first = _receipt(None)
    found += [("receipt.schema.json", first), ("receipt.schema.json", _receipt(first))]
    found += [("test-result.schema.json", result) for result in _test_results()]
    return tuple(found)


def _test_results() -> list[dict[str, Any]]:
    """A passing, a failing and an errored `prosec test` result, as the runner writes them."""
    from prosec.runtime.testing.runner import Assertion, TestResult

    held = Assertion(
        index=1,
        text="`decisions`: has 2 items",
        negated=False,
        negative=False,
        op="count",
        ok=True,
        observed="`decisions` has 2 items",
        decided_by="check",
    )
    judged = Assertion(
        index=2,
        text="`decisions`: invents a story",
        negated=True,
        negative=True,
        op="judge",
        ok=False,
        observed="it names a story the wire never carried",
        decided_by="judge",
    )
    passed = TestResult(name="t", path="t.test.prose.md", subject="desk", status="pass")
    passed.assertions.append(held)
    failed = TestResult(name="u", path="u.test.prose.md", subject="desk", status="fail")
    failed.assertions += [held, judged]
    errored = TestResult(name="v", path="v.test.prose.md", subject="fn", error="a function")
    return [passed.to_json(), failed.to_json(), errored.to_json()]


def _receipt(prev: dict[str, Any] | None) -> dict[str, Any]:
    return build_receipt(
        node="digest",
        prev=content_hash(prev) if prev is not None else None,
        contract_fingerprint="sha256:" + "1" * 64,
        wake_source="self",
        wake_refs=[],
        input_fingerprints=[],
        fingerprints={"@atomic": "sha256:" + "2" * 64},
        status="rendered",
        semantic_diff={"changed": ["@atomic"]},
    )


def _same_judgement(schema: str, document: Any) -> None:
    bundled = validate(document, schema)
    written = validate(document, schema, bundled=False)
    assert (bundled == []) == (written == []), (schema, bundled, written)
    if schema not in REWRITTEN:
        assert bundled == written


def test_every_kind_of_document_is_swept() -> None:
    kinds = {schema for schema, _ in documents()}
    assert kinds == set(_registry()[1])
    assert len(documents()) > 100


@pytest.mark.parametrize("index", range(len(documents())))
def test_known_documents_are_judged_alike(index: int) -> None:
    schema, document = documents()[index]
    _same_judgement(schema, document)


def test_only_the_known_bad_documents_are_invalid() -> None:
    invalid = [document for schema, document in documents() if validate(document, schema)]
    # corpus/invalid/config_invalid/prose.toml and the README's Helix languages.toml
    assert invalid == [{"lint": {"strict": "yes"}}, tomllib.loads(readme_tomls()[-1])]
    assert "language-server" in invalid[1]


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key in sorted(value):
            yield from _nodes(value[key], (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _nodes(item, (*path, index))


VALUES = st.sampled_from(
    [
        *(None, 0, -1, 1.5, float("inf"), "", "x", True, [], {}, ["x"], "wiring_*", "sha256:0"),
        *("P1M", "cron:0 0 30 2 *", {"kind": "never"}, {"kind": "always", "id": "a", "path": "x"}),
    ]
).map(copy.deepcopy)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_mutated_documents_are_judged_alike(data: st.DataObject) -> None:
    schema, original = data.draw(st.sampled_from(documents()))
    document = copy.deepcopy(original)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = list(_nodes(document))
        path = data.draw(st.sampled_from(paths))
        action = data.draw(st.sampled_from(["replace", "delete", "add"]))
        if not path:
            document = data.draw(VALUES)
            continue
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        if action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "add" and isinstance(parent[path[-1]], dict):
            parent[path[-1]]["unexpected"] = data.draw(VALUES)
        else:
            parent[path[-1]] = data.draw(VALUES)
    _same_judgement(schema, document)


def test_a_reference_beside_other_keywords_applies_both() -> None:
    # the README's own `[lint] ignore` used to lose its `$defs` (PointerToNowhere, exit 3)
    config = {"lint": {"ignore": ["section_unknown"], "select": ["wiring_*"]}}
    config["tools"] = {"mcp_registries": [".mcp.json"], "skill_paths": ["vendor/skills"]}
    assert validate(config, "config.schema.json") == []
    bad = {"lint": {"ignore": ["nonsense"]}, "tools": {"skill_paths": [""]}}
    _same_judgement("config.schema.json", bad)
    assert [f.path for f in validate(bad, "config.schema.json")] == [
        "$.lint.ignore[0]",
        "$.tools.skill_paths[0]",
    ]


def test_sibling_keywords_of_a_reference_still_constrain() -> None:
    schemas = {
        "s": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://example.invalid/s.schema.json",
            "$defs": {"word": {"type": "string"}},
            "properties": {"w": {"$ref": "#/$defs/word", "maxLength": 3, "description": "w"}},
        }
    }
    bundled = _bundle(schemas["s"], schemas)
    assert bundled["properties"]["w"] == {
        "maxLength": 3,
        "description": "w",
        "allOf": [{"type": "string"}],
    }


def test_a_recursive_reference_stays_a_reference_by_its_absolute_uri() -> None:
    schemas = {
        "tree": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://example.invalid/tree.schema.json",
            "$ref": "#/$defs/node",
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
                    },
                }
            },
        }
    }
    bundled = _bundle(schemas["tree"], schemas)
    items = bundled["properties"]["children"]["items"]
    assert items == {"$ref": "https://example.invalid/tree.schema.json#/$defs/node"}
