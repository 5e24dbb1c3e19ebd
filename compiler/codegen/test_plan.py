"""A test plan as the runtime runs it: the plan's data and a compiled intent of its own.

The test's intent keeps the subject node as the project compiled it and replaces every
producer the subject subscribes to by a fixture node: same name, facets and
canonicalizer, but an entry point woken with the fixture as its data (the built-in
`ingress` render publishes it). Nothing upstream of them is kept, so the subject runs
without its upstream nodes. Deterministic: the same plan and intent give the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..passes.tests import TestPlan

__all__ = ["function_intent", "plan_document", "test_intent"]


def test_intent(plan: TestPlan, intent: Mapping[str, Any]) -> dict[str, Any]:
    """The compiled intent one test runs (the schema of every compiled intent holds)."""
    topology = intent["topology"]
    edges = [e for e in topology["edges"] if e["subscriber"] == plan.subject]
    producers = sorted({e["producer"] for e in edges})
    kept = {plan.subject, *producers}
    nodes = []
    for entry in topology["nodes"]:
        if entry["node"] not in kept:
            continue
        if entry["node"] == plan.subject:
            node = {k: v for k, v in entry.items() if k != "cadence"}
        else:
            node = {
                "node": entry["node"],
                "contract_fingerprint": entry["contract_fingerprint"],
                "wake_source": "external",
                "render": {"kind": "ingress"},
            }
        nodes.append(node)
    postconditions = []
    for entry in intent["postconditions"]:
        if entry["node"] not in kept:
            continue
        if entry["node"] != plan.subject:  # a fixture is what the test says it is
            entry = {
                "node": entry["node"],
                "artifact": entry["artifact"],
                "mode": "deterministic",
                "validator": {"attested": [], "mode": "deterministic", "predicates": []},
            }
        postconditions.append(entry)
    subject_source = [s for s in intent["sources"] if s.get("name") == plan.subject]
    return {
        **{k: v for k, v in intent.items() if k not in ("topology", "diagnostics")},
        "sources": subject_source,
        "topology": {
            "nodes": nodes,
            "edges": edges,
            "entry_points": producers,
            "acyclic": True,
        },
        "canonicalizers": [c for c in intent["canonicalizers"] if c["node"] in kept],
        "postconditions": postconditions,
        "contract_fingerprints": {
            k: v for k, v in intent["contract_fingerprints"].items() if k in kept
        },
        "diagnostics": [],
    }


def function_intent(
    plan: TestPlan, intent: Mapping[str, Any], vm: Mapping[str, Any]
) -> dict[str, Any]:
    """A function's test runs the project's intent with the VM section of the subject
    (what `prosec run FILE` builds for a lone function)."""
    return {**intent, "vm": dict(vm)}


def plan_document(
    plan: TestPlan, intent: Mapping[str, Any], vm: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Everything the runtime needs to run one test (runtime/testing reads it)."""
    if plan.function:
        assert vm is not None
        return {
            "kind": "function",
            "name": plan.name,
            "path": plan.path,
            "line": plan.span.line,
            "subject": plan.subject,
            "caller": dict(plan.caller),
            "fixtures": {},
            "changes": None,
            "changed_caller": {},
            "checks": [check.to_json() for check in plan.checks],
            "intent": function_intent(plan, intent, vm),
        }
    return {
        "name": plan.name,
        "path": plan.path,
        "line": plan.span.line,
        "subject": plan.subject,
        "caller": dict(plan.caller),
        "fixtures": plan.fixture_data(),
        "changes": plan.changes_data(),
        "changed_caller": dict(plan.changed_caller),
        "checks": [check.to_json() for check in plan.checks],
        "intent": test_intent(plan, intent),
    }
