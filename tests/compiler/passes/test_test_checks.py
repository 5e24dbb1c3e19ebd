"""The lowering of Expects / Expects Not text to checks (compiler/passes/test_checks.py)."""

from __future__ import annotations

import json

import pytest
from prosec.compiler.ir import Item, ItemStyle, Span
from prosec.compiler.passes.test_checks import lower_item

SPAN = Span(path="t.prose.md", line=3, column=1, end_line=3, end_column=20)


def lowered(name: str | None, text: str, *, negated: bool = False) -> tuple[str, object, bool]:
    item = Item(
        name=name,
        description=text,
        text=f"`{name}`: {text}",
        style=ItemStyle.BACKTICK_COLON,
        span=SPAN,
    )
    check = lower_item(item, 1, negated=negated, nodes={"desk", "feed"})
    return check.op, json.loads(check.argument), check.negated


@pytest.mark.parametrize(
    ("text", "op", "argument"),
    [
        ("", "present", None),
        ("exists", "present", None),
        ("is published.", "present", None),
        ("is empty", "count", [0, 0]),
        ("has 2 items", "count", [2, 2]),
        ("has exactly three entries", "count", [3, 3]),
        ("has at least 1 story", "count", [1, None]),
        ("has at most 4 items", "count", [0, 4]),
        ("has 5 or more items", "count", [5, None]),
        ("has no items", "count", [0, 0]),
        ('is "lead"', "equals", "lead"),
        ("is `hold`", "equals", "hold"),
        ("equals [1, 2]", "equals", [1, 2]),
        ("is 3", "equals", 3),
        ("is true", "equals", True),
        ('is {"a": 1}', "equals", {"a": 1}),
        ('is one of "lead", "hold"', "one_of", ["lead", "hold"]),
        ("is one of `a`, `b` or `c`", "one_of", ["a", "b", "c"]),
        ('contains "Storm"', "contains", "Storm"),
        ("includes `x`", "contains", "x"),
        ('lists "a" before "b"', "before", ["a", "b"]),
        ("has `a` before `b`", "before", ["a", "b"]),
        ("every item has `story`", "every_has", ["story"]),
        ("each entry has a `story` and an `action`", "every_has", ["story", "action"]),
        ('matches the schema {"type": "array"}', "schema", {"type": "array"}),
        ('has the shape {"type": "object"}', "schema", {"type": "object"}),
        ("satisfies its postconditions", "postcondition", None),
        ("satisfies postcondition `pc-1`", "postcondition", "pc-1"),
        ("is short and to the point", "judge", None),
        ("contains at least five bullet points", "judge", None),
        ("is under 500 words", "judge", None),
    ],
)
def test_text_lowers_to_its_check(text: str, op: str, argument: object) -> None:
    assert lowered("decisions", text)[:2] == (op, argument)


def test_wake_checks_name_nodes_of_the_test() -> None:
    assert lowered("desk", "renders") == ("rendered", None, False)
    assert lowered("desk", "is rendered after the change") == ("rendered", None, False)
    assert lowered("desk", "stays asleep") == ("rendered", None, True)
    assert lowered("desk", "is skipped") == ("rendered", None, True)
    assert lowered("desk", "does not render", negated=True) == ("rendered", None, False)
    # a field that shares no node's name is a truth path
    assert lowered("decisions", "renders")[0] == "judge"


def test_error_file_and_negation() -> None:
    assert lowered("__error.md", "") == ("error_file", None, False)
    assert lowered("__error.md", "exists", negated=True) == ("error_file", None, True)
    assert lowered("stories", 'contains "x"', negated=True) == ("contains", "x", True)


def test_a_sentence_without_a_name_is_judged() -> None:
    assert lowered(None, "the briefing reads well")[0] == "judge"


def test_describe_says_what_runs() -> None:
    item = Item(
        name="stories",
        description="has at least 2 items",
        text="",
        style=ItemStyle.SENTENCE,
        span=SPAN,
    )
    check = lower_item(item, 1, negated=True, nodes=())
    assert check.describe() == "not (len(`stories`) >= 2)"


def test_hostile_values_stay_text() -> None:
    from prosec.compiler.passes.test_checks import literal

    deep = "[" * 100_000 + "]" * 100_000
    assert literal(deep) == deep  # past the depth limit: text, never a crash
    assert literal("NaN") == "NaN" and literal("[1e400]") == "[1e400]"
    assert literal("9" * 5_000) == "9" * 5_000
    assert literal('`{"a": [1, 2]}`') == {"a": [1, 2]} and literal("plain words.") == "plain words"
    assert lowered("x", "is " + deep)[0] == "judge"
