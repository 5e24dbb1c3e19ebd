"""Pattern expansion: instances become nodes (or helpers); bad instances are errors."""

from __future__ import annotations

from prosec.compiler.lint import parse_texts
from prosec.compiler.passes import patterns

from ..helpers import codes, edges, node, wire

PATTERN = (
    "src/loop.prose.md",
    "---\nname: loop\nkind: pattern\n---\n\n### Slots\n\n- `worker`: does it\n"
    "- `critic`: checks it\n- `polisher`: optional final pass\n\n### Config\n\n"
    "- `max_rounds`: default `3`\n",
)


def host(instance: str, kind: str = "responsibility") -> tuple[str, str]:
    fence = "```yaml\n" + instance.strip() + "\n```\n"
    if kind == "function":
        return node(
            "host", kind="function", maintains="", extra="### Returns\n\n- `r`: x\n\n" + fence
        )
    return node("host", extra=fence)


def expand(*files: tuple[str, str]) -> tuple[list[str], list[str]]:
    project, _ = parse_texts(list(files))
    expanded, found = patterns.run(project)
    made = [c.name for c in expanded.contracts if c.expanded_from is not None]
    return made, codes(found)


INSTANCE = """
- name: reviewed
  pattern: loop
  with:
    worker: writer
    critic: checker
  config:
    max_rounds: 2
"""


def test_instance_in_a_responsibility_is_a_node_wired_to_its_bound_nodes() -> None:
    topology, found = wire(PATTERN, host(INSTANCE), node("writer"))
    assert "reviewed" in [n.name for n in topology.nodes]
    assert ("writer", "@atomic", "reviewed") in edges(topology)
    assert codes(found) == []  # `checker` is no node: a called helper, not a need


def test_instance_in_a_function_is_a_called_helper() -> None:
    topology, _ = wire(PATTERN, host(INSTANCE, kind="function"), node("writer"))
    assert "reviewed" not in [n.name for n in topology.nodes]


def test_pattern_found_by_path_tail() -> None:
    made, found = expand(
        PATTERN, host(INSTANCE.replace("pattern: loop", "pattern: std/patterns/loop"))
    )
    assert made == ["reviewed"] and found == []


def test_unknown_pattern() -> None:
    assert expand(PATTERN, host(INSTANCE.replace("pattern: loop", "pattern: nope")))[1] == [
        "pattern_unknown"
    ]


def test_unbound_slot() -> None:
    assert expand(PATTERN, host(INSTANCE.replace("    critic: checker\n", "")))[1] == [
        "pattern_slot_unbound"
    ]


def test_unknown_slot_and_config_key() -> None:
    text = INSTANCE.replace("    critic: checker\n", "    critic: checker\n    judge: x\n")
    text = text.replace("max_rounds: 2", "max_rounds: 2\n    temperature: 1")
    assert expand(PATTERN, host(text))[1] == ["pattern_config_unknown", "pattern_slot_unknown"]


def test_instance_name_must_be_free() -> None:
    assert expand(PATTERN, host(INSTANCE.replace("name: reviewed", "name: host")))[1] == [
        "name_duplicate"
    ]


def test_nested_instance_expands_and_is_wired() -> None:
    nested = INSTANCE.replace(
        "    critic: checker\n",
        "    critic:\n      pattern: loop\n      with:\n        worker: writer\n        critic: c\n",
    )
    topology, found = wire(PATTERN, host(nested), node("writer"))
    names = [n.name for n in topology.nodes]
    assert "reviewed-critic" in names
    assert ("reviewed-critic", "@atomic", "reviewed") in edges(topology)
    assert codes(found) == []


def test_instance_name_must_be_a_safe_path_segment() -> None:
    """The instance is a node; its name becomes a directory at run time."""
    for bad in ("a/b", ".."):
        text = INSTANCE.replace("name: reviewed", f'name: "{bad}"')
        assert expand(PATTERN, host(text)) == ([], ["name_invalid"])
