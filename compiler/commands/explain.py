"""`prosec explain NODE`: every need of a node, the rung and text that wired it, its edges."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ..ir import Edge, Resolution, Topology, TopologyNode
from ..passes.forme import need_label
from .common import strict_option
from .errors import fail
from .inspect_common import compile_for_inspection


@click.command(name="explain")
@click.argument("node")
@click.argument("root", required=False, default=".", type=click.Path(path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True
)
@strict_option
def explain_command(node: str, root: Path, fmt: str, strict: bool | None) -> None:
    """Explain how NODE of the project at ROOT is wired.

    For each `### Requires` need: the Forme rung that resolved it (pinned, qualified,
    named, emits, mentioned), the text that decided it, and the edges it drew; or why
    it is ambiguous or unsatisfied, with the candidates. Then the node's edges in and
    out. NODE may name a contract template (`# Title [param]`): each of its mounts
    (`template[value]`) is explained, as a JSON list. Nothing is written.

    Exit status: 0, or 2 when NODE is not a node of the project.
    """
    result = compile_for_inspection(root, strict)
    topology = result.unit.topology
    assert topology is not None
    targets = [n for n in topology.nodes if n.name == node]
    if not targets:  # a contract template: explain each of its mounts
        targets = [n for n in topology.nodes if n.instance and n.instance.template == node]
    if not targets:
        names = ", ".join(n.name for n in topology.nodes) or "none"
        fail(f"no node `{node}` in {root} (nodes: {names})")
    explained = [describe(target, topology) for target in targets]
    if fmt == "json":
        data: Any = explained[0] if targets[0].name == node else explained
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write("\n".join(render_text(data) for data in explained))


def describe(node: TopologyNode, topology: Topology) -> dict[str, Any]:
    """The explanation as data (the JSON format, and what the text format prints)."""
    contract = node.contract
    needs = [_resolution(r) for r in topology.resolutions if r.subscriber == node.name]
    mounted = node.instance
    return {
        "node": node.name,
        "template": None
        if mounted is None
        else {
            "name": mounted.template,
            "parameter": mounted.parameter,
            "value": mounted.value,
            "facet": f"{mounted.producer}.{mounted.facet}",
        },
        "kind": contract.kind,
        "source": f"{contract.path}:{contract.name_span.line}",
        "wake_source": node.wake_source.value,
        "cadence": node.cadence,
        "entry_point": node.name in topology.entry_points,
        "needs": needs,
        "edges_in": [_edge(e) for e in topology.edges if e.subscriber == node.name],
        "edges_out": [_edge(e) for e in topology.edges if e.producer == node.name],
    }


def _resolution(resolution: Resolution) -> dict[str, Any]:
    need = resolution.need
    return {
        "need": need_label(need),
        "line": need.span.line,
        "status": resolution.status,
        "rung": resolution.rung.value if resolution.rung else None,
        "evidence": resolution.evidence,
        "edges": [f"{e.producer}.{e.facet}" for e in resolution.edges],
        "candidates": list(resolution.candidates),
    }


def _edge(edge: Edge) -> dict[str, Any]:
    return {
        "subscriber": edge.subscriber,
        "producer": edge.producer,
        "facet": edge.facet,
        "rung": edge.rung.value,
        "evidence": edge.evidence,
    }


def render_text(data: dict[str, Any]) -> str:
    wake = data["wake_source"] + "-driven"
    if data["cadence"]:
        wake += f", every {data['cadence']}"
    if data["entry_point"]:
        wake += ", entry point"
    lines = [f"{data['node']}  ({data['kind']}, {wake}; {data['source']})"]
    template = data.get("template")
    if template:
        lines.append(
            f"mount of template `{template['name']}` with {template['parameter']} = "
            f"`{template['value']}` (subscribed to {template['facet']})"
        )
    lines.append("needs:")
    if not data["needs"]:
        lines.append("  (none)")
    for number, need in enumerate(data["needs"], start=1):
        lines.append(f"  {number}. {need['need']}  (line {need['line']})")
        lines.append("     " + _verdict(need))
        lines.extend(f"     → {edge}" for edge in need["edges"])
    for title, key, end in (
        ("subscribes to (edges in):", "edges_in", "producer"),
        ("subscribed by (edges out):", "edges_out", "subscriber"),
    ):
        lines.append(title)
        if not data[key]:
            lines.append("  (none)")
        for edge in data[key]:
            name = (
                f"{edge['producer']}.{edge['facet']}"
                if end == "producer"
                else f"{edge['subscriber']} ← {edge['producer']}.{edge['facet']}"
            )
            lines.append(f"  {name}  [{edge['rung']}] {edge['evidence']}")
    return "\n".join(lines) + "\n"


def _verdict(need: dict[str, Any]) -> str:
    status, rung, evidence = need["status"], need["rung"], need["evidence"]
    candidates = ", ".join(need["candidates"])
    if status == "wired":
        return f"wired on the {rung} rung: {evidence}"
    if status == "ambiguous":
        return f"AMBIGUOUS on the {rung} rung ({evidence}); candidates: {candidates}"
    if status == "unsatisfied":
        nearest = f"; nearest producers: {candidates}" if candidates else ""
        return f"UNSATISFIED: {evidence}{nearest}"
    if status == "self":
        return f"names this node itself ({evidence}): self continuity, no edge"
    return f"caller input ({evidence}), not wired"
