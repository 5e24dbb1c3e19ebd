"""The topology as Mermaid, Graphviz DOT, or JSON parent/child maps."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

FORMATS = ("mermaid", "dot", "json")


@dataclass(frozen=True, slots=True)
class GraphNode:
    name: str
    wake_source: str
    cadence: str | None = None


@dataclass(frozen=True, slots=True)
class GraphEdge:
    subscriber: str
    producer: str
    facet: str


@dataclass(frozen=True, slots=True)
class Graph:
    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]
    entry_points: tuple[str, ...]


def from_intent(document: Mapping[str, Any]) -> Graph:
    """The graph of a compiled intent document (assumed schema-valid)."""
    topology = document["topology"]
    return Graph(
        nodes=tuple(
            GraphNode(n["node"], n["wake_source"], n.get("cadence")) for n in topology["nodes"]
        ),
        edges=tuple(
            GraphEdge(e["subscriber"], e["producer"], e["facet"]) for e in topology["edges"]
        ),
        entry_points=tuple(topology["entry_points"]),
    )


def render(graph: Graph, fmt: str) -> str:
    return {"mermaid": mermaid, "dot": dot, "json": maps}[fmt](graph)


def _label(node: GraphNode, entry: bool) -> str:
    if entry:
        return f"{node.name} (entry point)"
    if node.wake_source == "self":
        return f"{node.name} (self: {node.cadence})" if node.cadence else f"{node.name} (self)"
    return node.name


def mermaid(graph: Graph) -> str:
    ids = {node.name: f"n{i}" for i, node in enumerate(sorted(graph.nodes, key=lambda n: n.name))}
    entries = set(graph.entry_points)
    lines = ["flowchart LR"]
    for node in sorted(graph.nodes, key=lambda n: n.name):
        text = _label(node, node.name in entries).replace('"', "#quot;")
        shape = f'(["{text}"])' if node.name in entries else f'["{text}"]'
        lines.append(f"  {ids[node.name]}{shape}")
    for edge in sorted(graph.edges, key=lambda e: (e.producer, e.subscriber, e.facet)):
        facet = edge.facet.replace('"', "#quot;")
        lines.append(f'  {ids[edge.producer]} -->|"{facet}"| {ids[edge.subscriber]}')
    if entries:
        lines.append("  classDef entry stroke-width:3px")
        lines.append(
            "  class " + ",".join(ids[name] for name in sorted(entries) if name in ids) + " entry"
        )
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dot(graph: Graph) -> str:
    entries = set(graph.entry_points)
    lines = ["digraph prosec {", "  rankdir=LR;", "  node [shape=box];"]
    for node in sorted(graph.nodes, key=lambda n: n.name):
        attributes = f"label={_quote(_label(node, node.name in entries))}"
        if node.name in entries:
            attributes += ", shape=cds, penwidth=2"
        lines.append(f"  {_quote(node.name)} [{attributes}];")
    for edge in sorted(graph.edges, key=lambda e: (e.producer, e.subscriber, e.facet)):
        lines.append(
            f"  {_quote(edge.producer)} -> {_quote(edge.subscriber)} [label={_quote(edge.facet)}];"
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def parent_child(graph: Graph) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    parents: dict[str, set[str]] = {node.name: set() for node in graph.nodes}
    children: dict[str, set[str]] = {node.name: set() for node in graph.nodes}
    for edge in graph.edges:
        parents.setdefault(edge.subscriber, set()).add(edge.producer)
        children.setdefault(edge.producer, set()).add(edge.subscriber)
    return (
        {name: sorted(values) for name, values in sorted(parents.items())},
        {name: sorted(values) for name, values in sorted(children.items())},
    )


def maps(graph: Graph) -> str:
    parents, children = parent_child(graph)
    data: dict[str, Any] = {
        "parent_map": parents,
        "child_map": children,
        "entry_points": sorted(graph.entry_points),
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
