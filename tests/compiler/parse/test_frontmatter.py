"""Frontmatter: the PyYAML-free fast path agrees with PyYAML wherever it answers."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from prosec.compiler.parse.frontmatter import find_frontmatter, load_yaml, simple_mapping

_KEYS = st.sampled_from(["name", "kind", "id", "subject", "version", "owner", "x_y", "a-b"])
_VALUES = st.sampled_from(
    [
        "tally",
        "responsibility",
        "0ABCDEFGHJKMNPQRSTVWXYZ012",
        "7ZZZZZZZZZZZZZZZZZZZZZZZZZ",
        "3",
        "0",
        "012",
        "1.0",
        "1e3",
        "0x1F",
        "0b11",
        "0o17",
        "yes",
        "No",
        "on",
        "null",
        "~",
        "true",
        "2025-01-02",
        "12:30",
        "a: b",
        "x # y",
        "'q'",
        '"q"',
        "[1]",
        "{a: 1}",
        "|",
        ">",
        "&a",
        "*a",
        "!t",
        "@x",
        "`x`",
        "std/patterns/fan-out",
        "two words",
        " lead",
        "trail ",
        "é",
        "-",
        "- x",
        "?",
        "%",
        "a.b",
        "_x",
        "1_000",
        "12h",
        ".5",
        "+1",
        "-1",
    ]
)
_LINES = st.one_of(
    st.tuples(_KEYS, _VALUES).map(lambda kv: f"{kv[0]}: {kv[1]}"),
    st.sampled_from(["", "  nested: 1", "- item", "# comment", "key:", "\tx: 1", "k:v"]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINES, max_size=8).map("\n".join))
def test_fast_path_agrees_with_pyyaml(content: str) -> None:
    fast = simple_mapping(content, 2)
    if fast is None:
        return
    assert fast.value == yaml.safe_load(content)
    assert fast.error is None


def test_typical_frontmatter_takes_the_fast_path() -> None:
    result = simple_mapping("name: tally\nkind: responsibility\nid: 0ABCDEFGHJKMNPQRSTVWXYZ012", 2)
    assert result is not None
    assert result.value == {
        "name": "tally",
        "kind": "responsibility",
        "id": "0ABCDEFGHJKMNPQRSTVWXYZ012",
    }
    assert result.key_lines == {"name": (2, 1), "kind": (3, 1), "id": (4, 1)}


def test_other_yaml_goes_to_pyyaml_with_positions() -> None:
    result = load_yaml("name: x\nsummary: |\n  two\n  lines\n", 2)
    assert result.value == {"name": "x", "summary": "two\nlines\n"}
    assert result.key_lines["summary"] == (3, 1)
    broken = load_yaml("name: [x\nkind: y", 2)
    assert broken.value is None and broken.error is not None
    assert broken.error_line == 3


def test_find_frontmatter() -> None:
    block = find_frontmatter(["---", "name: a", "---", "body"])
    assert block is not None
    assert (block.content, block.first_line, block.end_line, block.closed) == (
        "name: a",
        2,
        3,
        True,
    )
    unclosed = find_frontmatter(["---", "name: a"])
    assert unclosed is not None and not unclosed.closed
    assert find_frontmatter(["name: a"]) is None


def test_yaml_nested_too_deep_is_refused_not_a_recursion_error() -> None:
    deep = load_yaml("a: " + "[" * 150 + "1" + "]" * 150, 2)
    assert deep.value is None and deep.error is not None
    assert "nested deeper than 100 levels" in deep.error and deep.error_line == 2
    assert load_yaml("a: " + "[" * 99 + "1" + "]" * 99, 2).error is None


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    bomb = load_yaml("\n".join(lines), 2)
    assert bomb.value is None and "aliases expanded" in (bomb.error or "")
    assert load_yaml("a: &x [1, 2]\nb: *x", 2).value == {"a": [1, 2], "b": [1, 2]}
