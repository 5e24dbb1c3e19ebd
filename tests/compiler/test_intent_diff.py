"""The review of a compiled-intent change: the reason first, the fingerprints last."""

from __future__ import annotations

import copy
import json
from typing import Any

from prosec.compiler.intent_diff import review

from .test_corpus_intents import corpus_projects

SNAPSHOTS = corpus_projects()[0].parents[1] / "tests" / "compiler" / "__snapshots__"


def _intent(name: str) -> dict[str, Any]:
    path = SNAPSHOTS / "test_corpus_intents" / f"test_compiled_intent_snapshot[{name}].json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_an_unchanged_intent_has_nothing_to_review() -> None:
    intent = _intent("newsroom")
    assert review(intent, copy.deepcopy(intent)).empty


def test_a_moved_edge_comes_before_the_fingerprints() -> None:
    before = _intent("newsroom")
    after = copy.deepcopy(before)
    edge = next(e for e in after["topology"]["edges"] if e["subscriber"] == "breaking-desk")
    edge["facet"] = "features"
    after["contract_fingerprints"]["breaking-desk"] = "sha256:" + "0" * 64
    lines = review(before, after).lines()
    assert lines[0] == (
        "compiled intent changed: edges 1 added, 1 removed; contract fingerprints 1 changed"
    )
    assert lines[1:] == [
        "  edges:",
        "    + wire-feed.features → breaking-desk",
        "    - wire-feed.breaking → breaking-desk",
        "  contract fingerprints:",
        "    ~ breaking-desk: sha256:1e471f55603c → sha256:000000000000",
    ]


def test_nodes_wake_sources_facets_rules_and_postconditions() -> None:
    before = _intent("newsroom")
    after = copy.deepcopy(before)
    nodes = after["topology"]["nodes"]
    nodes[0]["wake_source"] = "self"
    nodes.append({"node": "sports-desk", "wake_source": "input", "contract_fingerprint": "x"})
    canon = next(c for c in after["canonicalizers"] if c["node"] == "wire-feed")
    canon["facets"].append("weather")
    canon["spec"]["rules"].append({"path": "**.weather", "material": False})
    canon["spec"]["default_material"] = False
    post = next(p for p in after["postconditions"] if p["node"] == "breaking-desk")
    post["validator"]["predicates"] = []
    after["diagnostics"].append({"severity": "warning", "message": "[wiring_unsatisfied] x"})
    after["version"] = 3
    after["contract_fingerprints"]["sports-desk"] = "sha256:" + "1" * 64
    sections = review(before, after).sections
    assert sections["nodes"] == ["+ sports-desk (wakes on input)"]
    assert sections["wake sources"] == [f'~ {nodes[0]["node"]} wake_source: "input" → "self"']
    assert sections["facets"] == ["+ wire-feed.weather"]
    assert sections["canonicalizer rules"] == [
        "~ wire-feed: default_material: true → false",
        '+ wire-feed: rule {"material": false, "path": "**.weather"}',
    ]
    assert sections["postconditions"] == ["- breaking-desk: every `decisions` item has an `action`"]
    assert sections["diagnostics"] == [
        '+ {"message": "[wiring_unsatisfied] x", "severity": "warning"}'
    ]
    assert sections["other fields"] == ["~ version: 2 → 3"]
    assert list(sections)[-1] == "contract fingerprints"
    assert sections["contract fingerprints"] == ["+ sports-desk: sha256:111111111111"]


def test_a_document_that_is_no_intent_is_still_compared() -> None:
    assert review([1], [2]).sections == {"document": ["~ [1] → [2]"]}
    assert review({"topology": "odd"}, {"topology": "odd"}).empty
