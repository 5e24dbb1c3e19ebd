"""Pure reconciler planning: memo decisions, the diamond rule, propagation, cadences."""

from __future__ import annotations

from prosec.runtime.canonicalizer import COLD_START_TOKEN
from prosec.runtime.intent import parse_intent
from prosec.runtime.reconciler import (
    Decision,
    NodeHead,
    Wake,
    decide,
    input_fingerprints,
    moved_facets,
    plan_wave,
    ready,
    subscribers_woken,
)

from .project import intent

DIAMOND = parse_intent(
    intent(
        {"a": {"facets": ["x", "y"]}, "b": {}, "c": {}, "d": {}},
        [("b", "a", "x"), ("c", "a", "y"), ("d", "b", "@atomic"), ("d", "c", "@atomic")],
    )
)


def ok_receipt(inputs: list[str], contract: str = "c1", status: str = "rendered") -> dict:
    return {
        "content_hash": "sha256:" + "1" * 64,
        "contract_fingerprint": contract,
        "input_fingerprints": inputs,
        "fingerprints": {"@atomic": "t"},
        "status": status,
    }


def test_decide() -> None:
    cold = NodeHead()
    assert decide(contract_fingerprint="c1", inputs=[], head=cold, wake=None).action == "render"
    head = NodeHead(last=ok_receipt(["i"]), last_ok=ok_receipt(["i"]))
    same = decide(contract_fingerprint="c1", inputs=["i"], head=head, wake=None)
    assert same.action == "drop"
    woken = decide(contract_fingerprint="c1", inputs=["i"], head=head, wake=Wake(source="input"))
    assert woken.action == "skip"
    assert decide(contract_fingerprint="c2", inputs=["i"], head=head, wake=None).reason == (
        "contract changed"
    )
    assert decide(contract_fingerprint="c1", inputs=["j"], head=head, wake=None).action == "render"
    tick = decide(contract_fingerprint="c1", inputs=["i"], head=head, wake=Wake(source="self"))
    assert tick.action == "render"
    failed = NodeHead(last=ok_receipt(["i"], status="failed"), last_ok=None)
    retry = decide(contract_fingerprint="c1", inputs=["i"], head=failed, wake=None)
    assert (retry.action, retry.reason) == ("render", "retry after failure")


def test_input_fingerprints_use_cold_start_then_current_tokens() -> None:
    heads = {name: NodeHead() for name in DIAMOND.order}
    assert input_fingerprints(DIAMOND, "d", heads, {}, {}) == [COLD_START_TOKEN] * 2
    heads["b"] = NodeHead(last={**ok_receipt([]), "fingerprints": {"@atomic": "tb"}})
    assert input_fingerprints(DIAMOND, "d", heads, {}, {}) == ["tb", COLD_START_TOKEN]


def test_diamond_rule_waits_for_every_path() -> None:
    assert ready(DIAMOND, ["a", "b", "c", "d"], []) == ["a"]
    assert ready(DIAMOND, ["b", "c", "d"], []) == ["b", "c"]
    assert ready(DIAMOND, ["d"], ["b"]) == []
    assert ready(DIAMOND, ["a"], ["d"]) == []  # a descendant is reading a's truth


def test_plan_wave_settles_skips_in_one_pass() -> None:
    def decider(node: str) -> Decision:
        action = "render" if node == "c" else "drop"
        return Decision(action=action, reason="test")

    plan = plan_wave(DIAMOND, ["a", "b", "c", "d"], [], decider)
    assert [n for n, _ in plan.renders] == ["c"]
    assert plan.drops == ("a", "b") and plan.blocked == ("d",)


def test_propagation_only_to_subscribers_of_moved_facets() -> None:
    assert subscribers_woken(DIAMOND, "a", ["x"]) == ["b"]
    assert subscribers_woken(DIAMOND, "a", ["@atomic"]) == []
    assert moved_facets({"@atomic": "1", "x": "1"}, {"@atomic": "2", "x": "1"}, ["@atomic", "x"])


def test_wakes_coalesce() -> None:
    merged = Wake(source="input", refs=frozenset({"r1"})).merge(
        Wake(source="external", refs=frozenset({"r2"}))
    )
    assert merged == Wake(source="external", refs=frozenset({"r1", "r2"}))
