"""The runtime's evaluation of lowered test checks (runtime/testing/checks.py)."""

from __future__ import annotations

from typing import Any

import pytest
from prosec.runtime.testing.checks import MISSING, Observation, evaluate, lookup

TRUTH = {
    "decisions": [
        {"story": "Bridge reopens", "action": "lead"},
        {"story": "Storm warning", "action": "hold"},
    ],
    "title": "Morning edition",
    "count": 2,
}
SEEN = Observation(
    truth=TRUTH,
    validator={
        "predicates": [
            {"id": "pc-1", "kind": "every", "path": "decisions", "has": "action", "text": ""}
        ]
    },
    rendered=frozenset({"desk"}),
    files={"__error.md": "# Error: no-wire\n\nthe feed was empty\n"},
)


def verdict(op: str, target: str, argument: Any = None, negated: bool = False) -> bool:
    check = {"op": op, "target": target, "argument": argument, "negated": negated, "text": ""}
    return evaluate(check, SEEN).ok


def test_lookup_walks_objects_and_lists() -> None:
    assert lookup(TRUTH, "decisions.1.story") == "Storm warning"
    assert lookup(TRUTH, "decisions.-1.action") == "hold"
    assert lookup(TRUTH, "decisions.2") is MISSING
    assert lookup(TRUTH, "nope.x") is MISSING
    assert lookup(TRUTH, "") == TRUTH


@pytest.mark.parametrize(
    ("op", "target", "argument", "ok"),
    [
        ("present", "title", None, True),
        ("present", "subtitle", None, False),
        ("equals", "count", 2.0, True),
        ("equals", "title", " Morning edition ", True),
        ("equals", "count", True, False),
        ("one_of", "decisions.0.action", ["lead", "hold"], True),
        ("one_of", "decisions.0.action", ["spike"], False),
        ("count", "decisions", [2, 2], True),
        ("count", "decisions", [3, None], False),
        ("count", "count", [1, 1], False),
        ("contains", "decisions", "Storm warning", True),
        ("contains", "title", "morning", True),
        ("contains", "decisions", "Ferry", False),
        ("before", "decisions", ["Bridge reopens", "Storm warning"], True),
        ("before", "decisions", ["Storm warning", "Bridge reopens"], False),
        ("before", "decisions", ["Ferry", "Bridge reopens"], False),
        ("every_has", "decisions", ["story", "action"], True),
        ("every_has", "decisions", ["summary"], False),
        ("schema", "decisions", {"type": "array", "minItems": 2}, True),
        ("schema", "decisions", {"type": "array", "maxItems": 1}, False),
        ("schema", "decisions", {"type": 12}, False),
        ("postcondition", "", None, True),
        ("postcondition", "", "pc-1", True),
        ("rendered", "desk", None, True),
        ("rendered", "feed", None, False),
        ("error_file", "__error.md", None, True),
    ],
)
def test_each_op(op: str, target: str, argument: Any, ok: bool) -> None:
    assert verdict(op, target, argument) is ok
    assert verdict(op, target, argument, negated=True) is not ok


def test_a_failure_says_what_it_observed() -> None:
    check = {"op": "count", "target": "decisions", "argument": [3, 3], "negated": False}
    assert evaluate(check, SEEN).observed == "`decisions` has 2 items"
    check = {"op": "every_has", "target": "decisions", "argument": ["summary"], "negated": False}
    assert evaluate(check, SEEN).observed.startswith("item 1 of `decisions` has no `summary`")
    check = {"op": "error_file", "target": "__error.md", "argument": None, "negated": True}
    assert evaluate(check, SEEN).observed == "__error.md exists: # Error: no-wire"


def test_nothing_published_fails_a_value_check_and_holds_its_negation() -> None:
    empty = Observation(truth=MISSING, validator=None, rendered=frozenset(), files={})
    check = {"op": "equals", "target": "x", "argument": 1, "negated": False}
    assert evaluate(check, empty).ok is False
    outcome = evaluate({**check, "negated": True}, empty)
    assert outcome.ok and outcome.observed == "`x` is not published"
