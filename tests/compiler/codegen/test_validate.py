"""The compiled-intent checker over the compiler's own output: schema plus semantic rules,
every problem with its JSON path (the rule-by-rule table is tests/runtime/test_intent_check.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from prosec.compiler.config import Config
from prosec.compiler.pipeline import compile_texts
from prosec.runtime.intent_check import iter_problems
from prosec.runtime.problems import Problem

from ..helpers import node

FP = "sha256:" + "0" * 64


def compiled() -> dict[str, Any]:
    result = compile_texts(
        [
            node("hook", kind="gateway", maintains="#### items\n- `rows`: x"),
            node("reader", requires="- the `items` facet of `hook`"),
        ],
        Config(),
    )
    assert result.intent is not None and result.writable
    return result.intent


def validate(document: Any) -> list[Problem]:
    return list(iter_problems(document))


def paths(document: Any) -> list[str]:
    return [p.path for p in validate(document)]


def test_prosec_output_is_valid() -> None:
    assert validate(compiled()) == []


def test_an_upstream_style_manifest_without_extensions_is_valid() -> None:
    document = {
        "kind": "openprose.compile-phase-ir",
        "version": 2,
        "sources": [{"path": "src/a.prose.md", "kind": "responsibility", "name": "a"}],
        "topology": {
            "nodes": [{"node": "a", "contract_fingerprint": FP, "wake_source": "self"}],
            "edges": [],
            "entry_points": [],
            "acyclic": True,
        },
        "canonicalizers": [
            {"node": "a", "artifact": "dist/canonicalizers/a.js", "facets": ["@atomic"]}
        ],
        "postconditions": [
            {"node": "a", "artifact": "dist/postconditions/a.js", "mode": "render-attested"}
        ],
        "contract_fingerprints": {"a": FP},
        "diagnostics": [{"severity": "warning", "message": "x", "sourcePath": "src/a.prose.md"}],
    }
    assert validate(document) == []


def mutate(change: Any) -> list[str]:
    document = copy.deepcopy(compiled())
    change(document)
    return paths(document)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda d: d["topology"]["edges"][0].update(producer="ghost"),
            "$.topology.edges[0].producer",
        ),
        (lambda d: d["topology"]["edges"][0].update(facet="nope"), "$.topology.edges[0].facet"),
        (lambda d: d["topology"].update(entry_points=["reader"]), "$.topology.entry_points[0]"),
        (lambda d: d["topology"].update(entry_points=[]), "$.topology.entry_points"),
        (lambda d: d["topology"].update(acyclic=False), "$.topology.acyclic"),
        (lambda d: d["canonicalizers"].pop(), "$.canonicalizers"),
        (lambda d: d["postconditions"].append(d["postconditions"][0]), "$.postconditions"),
        (lambda d: d["contract_fingerprints"].update(hook=FP), "$.contract_fingerprints.hook"),
        (lambda d: d["topology"]["nodes"][0].pop("contract_fingerprint"), "$.topology.nodes[0]"),
        (lambda d: d["sources"][0].update(kind="system"), "$.sources[0].kind"),
        (lambda d: d["topology"].update(activations=[]), "$.topology.activations"),
        (
            lambda d: d["diagnostics"].append({"severity": "error", "message": "x"}),
            "$.diagnostics[0]",
        ),
        (lambda d: d["sources"][0].update(path="/abs/x.prose.md"), "$.sources[0].path"),
        (
            lambda d: d["postconditions"][0]["validator"].update(mode="render-attested"),
            "$.postconditions[0].validator.mode",
        ),
    ],
)
def test_each_rule_reports_its_path(change: Any, expected: str) -> None:
    assert expected in mutate(change)


def test_a_cycle_must_be_honest_and_is_never_valid() -> None:
    def cycle(d: dict[str, Any]) -> None:
        d["topology"]["edges"].append(
            {"subscriber": "hook", "producer": "reader", "facet": "@atomic"}
        )

    assert "$.topology.acyclic" in mutate(cycle)


def test_every_problem_is_listed() -> None:
    def many(d: dict[str, Any]) -> None:
        d["topology"]["edges"][0].update(producer="ghost", subscriber="ghost2")
        d["contract_fingerprints"] = {}

    found = mutate(many)
    assert {"$.topology.edges[0].producer", "$.topology.edges[0].subscriber"} <= set(found)
    assert found.count("$.contract_fingerprints") == 2


@pytest.mark.parametrize("name", ["..", ".", "a/b"])
def test_a_name_the_runtime_refuses_is_a_lint_error_not_an_invalid_manifest(name: str) -> None:
    result = compile_texts([node(name)], Config())
    codes = {d.code for d in result.diagnostics}
    assert "name_invalid" in codes and "internal_error" not in codes
    assert not result.writable
