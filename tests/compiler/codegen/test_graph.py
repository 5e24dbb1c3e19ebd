"""Topology renderings: Mermaid, DOT and the JSON parent/child maps."""

from __future__ import annotations

import json

from prosec.compiler.codegen.graph import Graph, GraphEdge, GraphNode, render

GRAPH = Graph(
    nodes=(
        GraphNode("hook", "external"),
        GraphNode("tick", "self", "PT6H"),
        GraphNode("sink", "input"),
    ),
    edges=(GraphEdge("sink", "hook", "items"), GraphEdge("sink", "tick", "@atomic")),
    entry_points=("hook",),
)


def test_mermaid() -> None:
    assert render(GRAPH, "mermaid") == (
        "flowchart LR\n"
        '  n0(["hook (entry point)"])\n'
        '  n1["sink"]\n'
        '  n2["tick (self: PT6H)"]\n'
        '  n0 -->|"items"| n1\n'
        '  n2 -->|"@atomic"| n1\n'
        "  classDef entry stroke-width:3px\n"
        "  class n0 entry\n"
    )


def test_dot() -> None:
    text = render(GRAPH, "dot")
    assert text.startswith("digraph prosec {\n")
    assert '"hook" [label="hook (entry point)", shape=cds, penwidth=2];' in text
    assert '"hook" -> "sink" [label="items"];' in text


def test_json_maps() -> None:
    data = json.loads(render(GRAPH, "json"))
    assert data["parent_map"] == {"hook": [], "sink": ["hook", "tick"], "tick": []}
    assert data["child_map"] == {"hook": ["sink"], "sink": [], "tick": ["sink"]}
    assert data["entry_points"] == ["hook"]
