"""Postconditions → validators: deterministic predicates, attestations, stable ids, mode."""

from __future__ import annotations

import pytest
from prosec.compiler.passes import postconditions

from ..helpers import node, project


def validator(maintains: str, extra: str = "") -> dict:  # type: ignore[type-arg]
    contract = project(node("n", maintains=maintains, extra=extra)).contracts[0]
    return postconditions.compile_node(contract).to_json()


@pytest.mark.parametrize(
    ("text", "predicate"),
    [
        ("`archived` is always `false`", {"kind": "always", "path": "archived", "equals": False}),
        ('`status` is never `"draft"`', {"kind": "never", "path": "status", "equals": "draft"}),
        ("every `items` entry has a `source`", {"kind": "every", "path": "items", "has": "source"}),
        (
            "`items` has at most 50 entries",
            {"kind": "count", "path": "items", "op": "<=", "value": 50},
        ),
        ("`score` is at least 0.5", {"kind": "compare", "path": "score", "op": ">=", "value": 0.5}),
        ("`summary` is present", {"kind": "exists", "path": "summary"}),
        ("`items` is non-empty", {"kind": "count", "path": "items", "op": ">=", "value": 1}),
    ],
)
def test_deterministic_forms(text: str, predicate: dict) -> None:  # type: ignore[type-arg]
    compiled = validator(f"- `x`: y\n- postcondition: {text}")
    assert compiled["mode"] == "deterministic"
    found = compiled["predicates"][0]
    assert {k: v for k, v in found.items() if k not in ("id", "text")} == predicate
    assert compiled["attested"] == []


def test_semantic_postconditions_are_attested_by_stable_id() -> None:
    compiled = validator(
        "The view. Postcondition: outreach is specific, never\n  generic.\n\n"
        "**Postconditions**:\n\n- Every competitor cites a source.\n"
    )
    assert compiled["mode"] == "render-attested"
    texts = [a["text"] for a in compiled["attested"]]
    assert texts == ["outreach is specific, never generic.", "Every competitor cites a source."]
    reflowed = validator(
        "The view. Postcondition: outreach is specific,\nnever generic.\n\n"
        "**Postconditions**:\n\n- Every competitor\n  cites a source.\n"
    )
    assert [a["id"] for a in reflowed["attested"]] == [a["id"] for a in compiled["attested"]]


def test_legacy_criteria_are_postconditions() -> None:
    compiled = validator("- `x`: y", extra="### Criteria\n\n- the summary is accurate")
    assert [a["text"] for a in compiled["attested"]] == ["the summary is accurate"]


def test_schema_lists_the_declared_fields_and_facets() -> None:
    schema = validator("- `total`: the sum\n#### history\n- `rows`: x")["schema"]
    assert schema["type"] == "object"
    assert sorted(schema["properties"]) == ["history", "total"]


def test_ids_differ_per_node_and_text() -> None:
    a = postconditions.stable_id("a", "text")
    assert a != postconditions.stable_id("b", "text") != postconditions.stable_id("a", "other")
    assert a.startswith("pc-") and a == postconditions.stable_id("a", "TEXT")
