"""`prosec explain NODE`: every need of a node, the rung and text that wired it, its edges."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ..ir import Edge, Resolution, Topology, TopologyNode
from ..passes.forme import need_label
from ..runtime_hints import lower as runtime_hints
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

    NODE may also be a test file (`*.prose.md` with `kind: test`): each of its tests'
    fixtures (by the fixture node that publishes them) and each assertion's lowering, the
    deterministic check it became or `judge`.

    Exit status: 0, or 2 when NODE is not a node of the project.
    """
    if node.endswith(".prose.md") and Path(node).is_file():
        explain_tests(Path(node), fmt)
        return
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


def explain_tests(path: Path, fmt: str) -> None:
    """The lowering of every test in one test file (`prosec explain FILE`)."""
    from ..report import render_text as render_diagnostics
    from ..test_suite import plan_suite
    from .errors import user_errors

    with user_errors():
        suite = plan_suite([path])
    if not suite.tests:
        fail(f"{path}: no `kind: test` contract to explain")
    if suite.diagnostics:
        sys.stderr.write(render_diagnostics(suite.diagnostics))
    explained = []
    for test in suite.tests:
        document = test.document or {}
        explained.append(
            {
                "test": test.name,
                "source": f"{test.path}:{test.line}",
                "subject": test.subject,
                "refused": test.refused or None,
                "caller": document.get("caller", {}),
                "fixtures": document.get("fixtures", {}),
                "changes": document.get("changes"),
                "checks": [
                    {k: c[k] for k in ("line", "text", "op", "negative", "lowering")}
                    for c in document.get("checks", [])
                ],
            }
        )
    if fmt == "json":
        sys.stdout.write(json.dumps(explained, indent=2, ensure_ascii=False) + "\n")
        return
    lines: list[str] = []
    for item in explained:
        lines.append(f"{item['test']} ({item['source']}): tests `{item['subject']}`")
        if item["refused"]:
            lines.append(f"  not runnable: {item['refused']}")
        for name, value in item["caller"].items():
            lines.append(f"  caller input {name} = {json.dumps(value, ensure_ascii=False)}")
        for producer, truth in item["fixtures"].items():
            shown = json.dumps(truth, ensure_ascii=False, sort_keys=True)
            lines.append(f"  fixture node {producer} publishes {shown}")
        if item["changes"] is not None:
            for producer, truth in item["changes"].items():
                shown = json.dumps(truth, ensure_ascii=False, sort_keys=True)
                lines.append(f"  then, changed: {producer} publishes {shown}")
        for check in item["checks"]:
            how = "judge" if check["op"] == "judge" else check["op"]
            sense = "Expects Not" if check["negative"] else "Expects"
            lines.append(f"  line {check['line']} ({sense}) {check['text']}")
            lines.append(f"    → {how}: {check['lowering']}")
        lines.append("")
    sys.stdout.write("\n".join(lines))


def describe(node: TopologyNode, topology: Topology) -> dict[str, Any]:
    """The explanation as data (the JSON format, and what the text format prints)."""
    contract = node.contract
    needs = [_resolution(r) for r in topology.resolutions if r.subscriber == node.name]
    mounted = node.instance
    hints = runtime_hints(contract)
    described: dict[str, Any] = {
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
    if hints is not None:  # `### Runtime` (and `### Shape` delegates), as compiled
        described["runtime"] = hints.to_json()
    return described


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
    runtime = data.get("runtime")
    if runtime:
        lines.append("runtime: " + _runtime_text(data["node"], runtime))
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


_MEMORY = {
    "true": "runs/{id}/agents/{node}/",
    "project": "state/agents/{node}/",
    "user": "$OPENPROSE_USER_ROOT/state/agents/{node}/",
}


def _runtime_text(node: str, runtime: dict[str, Any]) -> str:
    """`memory state/agents/keeper/ (persist: project), model opus, delegates a, b`."""
    parts = []
    persist = runtime.get("persist")
    if persist is not None:
        folder = runtime.get("path", "") + "/" if persist == "path" else _MEMORY[persist]
        parts.append(f"memory {folder.replace('{node}', node)} (persist: {persist})")
    if runtime.get("model"):
        parts.append(f"model {runtime['model']}")
    if runtime.get("delegates"):
        parts.append("delegates " + ", ".join(runtime["delegates"]))
    return ", ".join(parts)
