"""Forme for the editor (the pipeline's wiring slice: patterns → Forme → canonicalizer
checks, as `prosec build` runs them) and the questions the features ask of its topology."""

from __future__ import annotations

import functools

from ..config import Config
from ..diagnostics import Diagnostic
from ..ir import ATOMIC_FACET, Contract, Edge, Facet, Need, Project, Resolution, Span, Topology
from ..lowered import CanonicalizerSpec
from ..passes import canonicalize
from ..pipeline import WIRING, Unit, run_pipeline, select
from .workspace import Analysis

Lowered = tuple[CanonicalizerSpec, list[Diagnostic]]


def wire(project: Project, config: Config) -> tuple[Project, Topology | None, list[Diagnostic]]:
    """The build's wiring passes over a parsed, checked project (no host lookups)."""
    unit = run_pipeline(Unit(project=project, config=config), passes=select(*WIRING))
    return unit.project, unit.topology, list(unit.diagnostics)


class Wiring:
    """`wire` for a long-lived server: the same passes and findings, but each contract's
    `### Maintains` is lowered again only when the contract changed.

    `canonicalize.run` takes a memoized lowering, so a keystroke lowers one contract
    instead of fifty. IR nodes are values, so the memo is keyed by the contract itself,
    looked up by identity first (an unchanged file's parse hands back the same objects,
    and hashing a contract walks all of it), then by value (the file was parsed again).
    The least recently used lowerings beyond `size` are dropped.

    Forme is not traced here (`forme.incremental`): at fifty files, building the traced
    index costs what the re-resolved needs save."""

    def __init__(self, size: int = 2048) -> None:
        self._lower = functools.lru_cache(maxsize=size)(canonicalize.lower)
        self._size = size
        self._same: dict[int, tuple[Contract, Lowered]] = {}

    def _lowered(self, contract: Contract) -> Lowered:
        hit = self._same.get(id(contract))
        if hit is not None and hit[0] is contract:
            return hit[1]
        found = self._lower(contract)
        if len(self._same) >= self._size:
            self._same.clear()
        self._same[id(contract)] = (contract, found)
        return found

    def __call__(
        self, project: Project, config: Config
    ) -> tuple[Project, Topology | None, list[Diagnostic]]:
        unit = Unit(project=project, config=config, lowering=self._lowered)
        unit = run_pipeline(unit, passes=select(*WIRING))
        return unit.project, unit.topology, list(unit.diagnostics)


def resolution(topology: Topology | None, need: Need) -> Resolution | None:
    if topology is None:
        return None
    return next((r for r in topology.resolutions if r.need.span == need.span), None)


def mounts(topology: Topology, name: str) -> set[str]:
    """The topology nodes a contract name stands for: itself, or a template's mounts."""
    found = {n.name for n in topology.nodes if n.instance and n.instance.template == name}
    return found or {name}


def subscribers(topology: Topology | None, producer: str, facet: str | None = None) -> list[Edge]:
    """Edges into `producer` (into one of its facets when `facet` is given), sorted; a
    contract template's edges are those of all its mounts."""
    if topology is None:
        return []
    names = mounts(topology, producer)
    return sorted(
        (e for e in topology.edges if e.producer in names and facet in (None, e.facet)),
        key=lambda e: (e.subscriber, e.facet, e.need.span.line if e.need else 0),
    )


def feeds(topology: Topology | None, subscriber: str) -> list[Edge]:
    if topology is None:
        return []
    names = mounts(topology, subscriber)
    return sorted(
        (e for e in topology.edges if e.subscriber in names),
        key=lambda e: (e.producer, e.facet),
    )


def facet_target(analysis: Analysis, producer: str, facet: str) -> Span | None:
    """Where `producer.facet` is declared: its `####` heading, `### Maintains` for @atomic."""
    node = analysis.node(producer)
    if node is None:
        return None
    if facet != ATOMIC_FACET:
        declared = find_facet(node, facet)
        if declared is not None:
            return declared.heading_span
    maintains = node.section("maintains")
    return maintains.heading_span if maintains is not None else node.name_span


def find_facet(node: Contract, name: str) -> Facet | None:
    wanted = name.lower()
    return next((f for f in node.facets if f.name.lower() == wanted), None)


def split_candidate(analysis: Analysis, candidate: str) -> tuple[str, str]:
    """`producer.facet` → (producer, facet); a bare producer means its `@atomic`.

    The longest node name that prefixes the candidate wins, so dotted names still split."""
    names = sorted(
        (c.name for c in analysis.project.contracts if candidate.startswith(c.name)),
        key=len,
        reverse=True,
    )
    for name in names:
        rest = candidate[len(name) :]
        if not rest:
            return name, ATOMIC_FACET
        if rest.startswith(".") and len(rest) > 1:
            return name, rest[1:]
    producer, dot, facet = candidate.partition(".")
    return producer, facet if dot and facet else ATOMIC_FACET


def subscriber_span(analysis: Analysis, edge: Edge) -> Span | None:
    """Where an edge is asked for: its need, else (an `### Emits` edge) the subscriber."""
    if edge.need is not None:
        return edge.need.name_span or edge.need.span
    node = analysis.node(edge.subscriber)
    return node.name_span if node is not None else None
