"""`prosec graph`: the topology as Mermaid, Graphviz DOT or JSON parent/child maps."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from prosec.runtime.intent_check import iter_problems

from ..codegen import graph as graph_mod
from .common import strict_option
from .errors import fail
from .inspect_common import compile_for_inspection
from .validate import load_intent


@click.command(name="graph")
@click.argument("root", required=False, default=".", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(graph_mod.FORMATS),
    default="mermaid",
    show_default=True,
    help="mermaid: a flowchart; dot: Graphviz; json: parent_map / child_map.",
)
@click.option(
    "--manifest",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Draw this compiled intent instead of compiling ROOT.",
)
@strict_option
def graph_command(root: Path, fmt: str, manifest: Path | None, strict: bool | None) -> None:
    """Print the subscription graph of the project at ROOT (or of a compiled intent).

    Edges run producer → subscriber and carry their facet as the label; entry points
    (external-driven nodes) are marked, and self-driven nodes show their cadence.

    \b
    Examples:
      prosec graph > topology.mmd
      prosec graph --format dot | dot -Tsvg > topology.svg
      prosec graph --manifest dist/manifest.active.json --format json
    """
    if manifest is not None:
        document, problems = load_intent(manifest)
        problems = problems or list(iter_problems(document))
        if any(p.path.startswith("$.topology") or p.path == "$" for p in problems):
            fail(f"{manifest}: not a valid compiled intent ({problems[0]})")
        graph = graph_mod.from_intent(document)
    else:
        topology = compile_for_inspection(root, strict).unit.topology
        assert topology is not None
        graph = graph_mod.Graph(
            nodes=tuple(
                graph_mod.GraphNode(n.name, n.wake_source.value, n.cadence) for n in topology.nodes
            ),
            edges=tuple(
                graph_mod.GraphEdge(e.subscriber, e.producer, e.facet) for e in topology.edges
            ),
            entry_points=topology.entry_points,
        )
    sys.stdout.write(graph_mod.render(graph, fmt))
