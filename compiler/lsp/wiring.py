"""Forme for the editor (patterns → Forme → canonicalizer checks, as `prosec build` runs
them) and the questions the features ask of its topology."""

from __future__ import annotations

from ..config import Config
from ..diagnostics import Diagnostic
from ..ir import ATOMIC_FACET, Contract, Edge, Facet, Need, Project, Resolution, Span, Topology
from ..lowered import CanonicalizerSpec
from ..passes import canonicalize, forme, patterns
from .workspace import Analysis


def wire(project: Project, config: Config) -> tuple[Project, Topology, list[Diagnostic]]:
    """The build's wiring passes over a parsed, checked project (no host lookups)."""
    expanded, found = patterns.run(project)
    topology, wired = forme.run(expanded, config)
    _, lowered = canonicalize.run(topology)
    return expanded, topology, [*found, *wired, *lowered]


class Wiring:
    """`wire` for a long-lived server: the same passes and findings, but each contract's
    `### Maintains` is lowered again only when the contract changed.

    `canonicalize.run` takes a memoized lowering, so a keystroke lowers one contract
    instead of fifty. The parse cache hands back the same `Contract` objects
    for unchanged files, so identity is the cache key (a strong reference keeps ids unique).
    """

    def __init__(self) -> None:
        self._lowered: dict[int, tuple[Contract, CanonicalizerSpec, list[Diagnostic]]] = {}

    def __call__(
        self, project: Project, config: Config
    ) -> tuple[Project, Topology, list[Diagnostic]]:
        expanded, found = patterns.run(project)
        topology, wired = forme.run(expanded, config)
        return expanded, topology, [*found, *wired, *self._canonicalize(topology)]

    def _canonicalize(self, topology: Topology) -> list[Diagnostic]:
        kept: dict[int, tuple[Contract, CanonicalizerSpec, list[Diagnostic]]] = {}

        def lower_cached(contract: Contract) -> tuple[CanonicalizerSpec, list[Diagnostic]]:
            cached = self._lowered.get(id(contract))
            if cached is None or cached[0] is not contract:
                spec, lowered = canonicalize.lower(contract)
                cached = (contract, spec, lowered)
            kept[id(contract)] = cached
            return cached[1], cached[2]

        _, found = canonicalize.run(topology, lower_cached)
        self._lowered = kept
        return found


def resolution(topology: Topology | None, need: Need) -> Resolution | None:
    if topology is None:
        return None
    return next((r for r in topology.resolutions if r.need.span == need.span), None)


def subscribers(topology: Topology | None, producer: str, facet: str | None = None) -> list[Edge]:
    """Edges into `producer` (into one of its facets when `facet` is given), sorted."""
    if topology is None:
        return []
    return sorted(
        (e for e in topology.edges if e.producer == producer and facet in (None, e.facet)),
        key=lambda e: (e.subscriber, e.facet, e.need.span.line if e.need else 0),
    )


def feeds(topology: Topology | None, subscriber: str) -> list[Edge]:
    if topology is None:
        return []
    return sorted(
        (e for e in topology.edges if e.subscriber == subscriber),
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
