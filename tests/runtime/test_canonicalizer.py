"""Canonicalizer specs → reductions and FingerprintMaps."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prosec.runtime.canonical import token
from prosec.runtime.canonicalizer import (
    ATOMIC,
    COLD_START_TOKEN,
    CanonicalizerSpec,
    SpecError,
    cold_start_map,
    fingerprint,
    reduce,
)
from prosec.runtime.schemas import validate

TRUTH: dict[str, Any] = {
    "name": "Acme",
    "fetched_at": "2026-01-01T00:00:00Z",
    "funding": {"events": [{"round": "A", "fetched_at": "x", "amount": 10.004}]},
    "hiring": {"departments": ["eng", "ops", "eng"], "open": 3},
    "title": "  Hello   World ",
}


def spec(data: dict[str, Any]) -> CanonicalizerSpec:
    assert validate(data, "canonicalizer-spec.schema.json") == []
    return CanonicalizerSpec.from_json(data)


def test_identity_spec_tokens_the_whole_truth() -> None:
    fp = fingerprint(spec({}), TRUTH, ["@atomic"])
    assert fp == {ATOMIC: token(TRUTH)}


def test_rules() -> None:
    s = spec(
        {
            "rules": [
                {"path": "**.fetched_at", "material": False},
                {"path": "hiring.departments", "collection": "set"},
                {"path": "funding.events.amount", "number": {"quantum": 0.01}},
                {"path": "title", "text": {"collapse_whitespace": True, "case_insensitive": True}},
            ]
        }
    )
    assert reduce(s, TRUTH) == {
        "name": "Acme",
        "funding": {"events": [{"round": "A", "amount": 10}]},
        "hiring": {"departments": ["eng", "ops"], "open": 3},
        "title": "hello world",
    }


def test_exact_rule_beats_wildcard_for_material() -> None:
    s = spec(
        {"rules": [{"path": "**.id", "material": False}, {"path": "keep.id", "material": True}]}
    )
    assert reduce(s, {"keep": {"id": 1}, "drop": {"id": 2}}) == {"keep": {"id": 1}, "drop": {}}


def test_default_material_false_keeps_only_listed_fields() -> None:
    # Divergence from the reference, which drops the root: listed fields still count.
    s = spec({"default_material": False, "rules": [{"path": "hiring.open", "material": True}]})
    assert reduce(s, TRUTH) == {"hiring": {"open": 3}}
    assert fingerprint(s, TRUTH, [])[ATOMIC] != token(None)


def test_facets_move_independently() -> None:
    s = spec({"facets": [{"facet": "funding", "paths": ["funding"]}]})
    facets = ["@atomic", "funding", "hiring"]  # hiring owns its own key by default
    before = fingerprint(s, TRUTH, facets)
    changed = {**TRUTH, "hiring": {"departments": ["eng"], "open": 4}}
    after = fingerprint(s, changed, facets)
    assert before["funding"] == after["funding"]
    assert before["hiring"] != after["hiring"]
    assert before[ATOMIC] != after[ATOMIC]
    shared_only = {**TRUTH, "name": "Other"}
    moved = fingerprint(s, shared_only, facets)
    assert (moved["funding"], moved["hiring"]) == (before["funding"], before["hiring"])
    assert moved[ATOMIC] != before[ATOMIC]


def test_immaterial_churn_does_not_move_tokens() -> None:
    s = spec({"rules": [{"path": "**.fetched_at", "material": False}]})
    churned = {**TRUTH, "fetched_at": "2027-01-01T00:00:00Z"}
    assert fingerprint(s, TRUTH, ["@atomic"]) == fingerprint(s, churned, ["@atomic"])


def test_facet_paths_through_lists() -> None:
    s = spec({"facets": [{"facet": "rounds", "paths": ["funding.events.round"]}]})
    fp = fingerprint(s, TRUTH, ["rounds"])
    assert fp["rounds"] == token({"funding": {"events": [{"round": "A"}]}})


def test_missing_facet_paths_give_the_empty_object() -> None:
    s = spec({"facets": [{"facet": "gone", "paths": ["nope"]}]})
    assert fingerprint(s, TRUTH, ["gone"])["gone"] == token({})


def test_cold_start_map_is_one_constant() -> None:
    assert cold_start_map(["@atomic", "a", "b"]) == {
        "@atomic": COLD_START_TOKEN,
        "a": COLD_START_TOKEN,
        "b": COLD_START_TOKEN,
    }
    assert token(None) == COLD_START_TOKEN


@pytest.mark.parametrize(
    "bad",
    [
        {"rules": [{"path": ""}]},
        {"rules": [{"path": "a..b"}]},
        {"rules": [{"path": "a", "collection": "bag"}]},
        {"rules": [{"path": "a", "number": {"quantum": 0}}]},
        {"facets": [{"facet": "@atomic", "paths": []}]},
        {"nonsense": 1},
    ],
)
def test_bad_specs(bad: dict[str, Any]) -> None:
    with pytest.raises(SpecError):
        CanonicalizerSpec.from_json(bad)
    assert validate(bad, "canonicalizer-spec.schema.json") != []


@settings(max_examples=100, deadline=None)
@given(st.permutations(["x", "y", "z", "w"]))
def test_set_collections_ignore_order(order: list[str]) -> None:
    s = spec({"rules": [{"path": "tags", "collection": "set"}]})
    assert fingerprint(s, {"tags": order}, []) == fingerprint(s, {"tags": sorted(order)}, [])


def test_reduce_does_not_mutate_input() -> None:
    s = spec({"rules": [{"path": "**.fetched_at", "material": False}]})
    snapshot = repr(TRUTH)
    reduce(s, TRUTH)
    assert repr(TRUTH) == snapshot
