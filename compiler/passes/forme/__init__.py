"""Forme: resolve every need to producer facets, draw the DAG and prove it acyclic.

The only networkx user (imported only when a cycle must be named). `run(project, config)` is pure: the language server calls it for
hover, definition and references, and the build pipeline for the topology.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ... import diagnostics as diag
from ...config import Config, WiringPin
from ...diagnostics import Diagnostic, Fix
from ...diagnostics import Edit as DiagEdit
from ...fixes import qualifier
from ...ir import (
    ATOMIC_FACET,
    Contract,
    ContractKind,
    Edge,
    Instance,
    Need,
    Project,
    Resolution,
    Rung,
    Span,
    Topology,
    TopologyNode,
    WakeSource,
)
from . import incremental
from .incremental import Wiring
from .index import Broken, EmitsEntry, ProducerIndex, broken_sources, emits_entries, node_contracts
from .ladder import Problem, resolve
from .templates import Template, expand, instance_name
from .text import analyze, key

__all__ = ["Wiring", "find_need", "run", "wire"]


def run(project: Project, config: Config) -> tuple[Topology, list[Diagnostic]]:
    """Wire every `### Requires` need of every node; report what could not be wired."""
    topology, found, _ = wire(project, config)
    return topology, found


def wire(
    project: Project, config: Config, previous: Wiring | None = None, traced: bool = False
) -> tuple[Topology, list[Diagnostic], Wiring | None]:
    """`run`, and with `traced` the memo of this wiring (None when the project cannot be
    traced, see `incremental`): given the last build's memo as `previous`, only the needs
    a change can reach are resolved again. The topology is the same either way."""
    index = ProducerIndex(node_contracts(project), traced=traced)
    templates, contracts, found = expand(index)
    if templates:  # mounts replace their templates: index the expanded node set
        instances = {instance_name(t.name, i.value): i for t in templates for i in t.instances}
        index = ProducerIndex(contracts, instances)
    parameter_needs = {t.name: t for t in templates if t.need is not None}
    broken = broken_sources(project)
    entries, emits_found = emits_entries(index)
    found += emits_found
    emits: dict[str, list[EmitsEntry]] = {}
    for entry in entries:
        emits.setdefault(entry.subscriber, []).append(entry)
    pins, pin_problems = _pins(config, index)
    found += pin_problems
    reuse = None
    if traced and incremental.traceable(project, config, index, bool(templates)):
        reuse = incremental.Reuse(
            previous, index, incremental.digests(project), incremental.emits_of(entries)
        )
    resolutions: list[Resolution] = []
    for name, producer in sorted(index.producers.items()):
        mount = producer.instance
        template = parameter_needs.get(mount.template if mount else name)
        for position, need in enumerate(producer.contract.needs, start=1):
            if template is not None and need == template.need:
                found_pins = pins.get((name, position), ())
                resolution, problems = _parameter(
                    name, need, template, mount, found_pins, index, emits
                )
            elif reuse is not None:
                resolution, problems = _traced(name, position, need, index, emits, reuse)
            else:
                resolution, problems = resolve(
                    name, need, pins.get((name, position), ()), index, emits
                )
            resolutions.append(resolution)
            found += _report(resolution, problems, mount.template if mount else name, broken)
    edges = _edges(resolutions, entries)
    acyclic, cycles = _cycles(sorted(index.producers), edges)
    found += [_cycle_diagnostic(cycle, edges, index) for cycle in cycles]
    nodes = tuple(_node(p.contract, p.instance) for _, p in sorted(index.producers.items()))
    topology = Topology(
        nodes=nodes,
        edges=edges,
        entry_points=tuple(n.name for n in nodes if n.wake_source is WakeSource.EXTERNAL),
        acyclic=acyclic,
        resolutions=tuple(resolutions),
        cycle=tuple(cycles[0]) if cycles else (),
    )
    return topology, found, None if reuse is None else reuse.result()


def _traced(
    name: str,
    position: int,
    need: Need,
    index: ProducerIndex,
    emits: dict[str, list[EmitsEntry]],
    reuse: incremental.Reuse,
) -> tuple[Resolution, list[Problem]]:
    """The memo's resolution when nothing it read changed, else the ladder's (traced)."""
    hit = reuse.get(name, position, need)
    if hit is not None:
        return hit
    trace = index.start_trace()
    try:
        resolution, problems = resolve(name, need, (), index, emits)
    finally:
        index.stop_trace()
    reuse.put(name, position, resolution, problems, trace)
    return resolution, problems


def _node(contract: Contract, instance: Instance | None) -> TopologyNode:
    continuity = contract.continuity
    default = WakeSource.EXTERNAL if contract.kind == ContractKind.GATEWAY else WakeSource.INPUT
    wake = continuity.wake_source if continuity else default
    cadence = continuity.cadence if continuity and wake is WakeSource.SELF else None
    return TopologyNode(
        name=contract.name, contract=contract, wake_source=wake, cadence=cadence, instance=instance
    )


def _parameter(
    name: str,
    need: Need,
    template: Template,
    mount: Instance | None,
    pins: Sequence[WiringPin],
    index: ProducerIndex,
    emits: dict[str, list[EmitsEntry]],
) -> tuple[Resolution, list[Problem]]:
    """A template's parameter need: a mount subscribes to exactly its facet; an undecided
    template (mounted whole) to the `@atomic` facet of its producer, or of what the ladder
    finds when the need names none."""
    target = (mount.producer, mount.facet) if mount else (template.producer, ATOMIC_FACET)
    producer, facet = target
    if producer is not None:
        evidence = (
            f"template parameter `{mount.parameter}` = `{mount.value}`: `{producer}.{facet}`"
            if mount
            else f"template `{template.name}` not expanded: `{producer}.{facet}`"
        )
        # a producer that is itself a template stands for all its mounts
        producers = index.template(producer) or (producer,)
        edges = tuple(
            Edge(
                subscriber=name,
                producer=each,
                facet=facet,
                rung=Rung.QUALIFIED,
                evidence=evidence,
                need=need,
            )
            for each in producers
        )
        resolution = Resolution(
            subscriber=name, need=need, edges=edges, rung=Rung.QUALIFIED, evidence=evidence
        )
        return resolution, []
    resolution, _ = resolve(name, need, pins, index, emits)
    atomic = tuple(
        dict.fromkeys(replace(e, facet=ATOMIC_FACET, need=need) for e in resolution.edges)
    )
    status = "wired" if atomic else resolution.status
    return replace(resolution, edges=atomic, status=status), []


def _edges(resolutions: Sequence[Resolution], emits: Sequence[EmitsEntry]) -> tuple[Edge, ...]:
    """Resolved edges plus `### Emits` wakes not already covered, unique and sorted."""
    unique: dict[tuple[str, str, str], Edge] = {}
    for resolution in resolutions:
        for edge in resolution.edges:
            unique.setdefault((edge.subscriber, edge.producer, edge.facet), edge)
    wired = {(sub, producer) for sub, producer, _ in unique}
    for entry in emits:
        if (entry.subscriber, entry.gateway) not in wired:
            edge = Edge(
                subscriber=entry.subscriber,
                producer=entry.gateway,
                facet=ATOMIC_FACET,
                rung=Rung.EMITS,
                evidence=f"`{entry.gateway}` {entry.evidence}",
            )
            unique.setdefault((edge.subscriber, edge.producer, edge.facet), edge)
    return tuple(unique[k] for k in sorted(unique))


def _cycles(names: list[str], edges: Sequence[Edge]) -> tuple[bool, list[list[str]]]:
    """Acyclicity, and one cycle path per strongly connected component when not.

    An acyclic graph (the usual case) is proved by Kahn's algorithm without networkx, so
    `prosec lint FILE` never pays its import; networkx names the cycles when there are."""
    pairs = sorted({(e.producer, e.subscriber) for e in edges})
    if _acyclic(names, pairs):
        return True, []
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(names)
    graph.add_edges_from(pairs)
    cycles = []
    components = sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)
    for component in components:
        found = nx.find_cycle(graph.subgraph(component), source=component[0])
        cycles.append([found[0][0], *(v for _, v, *_ in found)])
    return False, cycles


def _acyclic(names: list[str], pairs: Sequence[tuple[str, str]]) -> bool:
    """Kahn's algorithm: every node can be removed once its producers are gone."""
    waiting = dict.fromkeys(names, 0)
    children: dict[str, list[str]] = {}
    for producer, subscriber in pairs:
        waiting.setdefault(producer, 0)
        waiting[subscriber] = waiting.get(subscriber, 0) + 1
        children.setdefault(producer, []).append(subscriber)
    ready = [node for node, count in waiting.items() if count == 0]
    removed = 0
    while ready:
        node = ready.pop()
        removed += 1
        for child in children.get(node, ()):
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.append(child)
    return removed == len(waiting)


def _cycle_diagnostic(cycle: list[str], edges: Sequence[Edge], index: ProducerIndex) -> Diagnostic:
    producer, subscriber = cycle[0], cycle[1]
    edge = next(e for e in edges if e.producer == producer and e.subscriber == subscriber)
    span = edge.need.span if edge.need else index.producers[subscriber].contract.name_span
    path = " → ".join(f"`{name}`" for name in cycle)
    return diag.make(
        "wiring_cycle",
        f"subscription cycle {path} (each feeds the next); drop one of these needs, or make "
        "the feedback `self-driven` continuity instead of an edge",
        span,
    )


def _report(
    resolution: Resolution, problems: list[Problem], sub: str, broken: Mapping[str, Broken]
) -> list[Diagnostic]:
    """The findings of one resolution; `sub` names the subscriber (a template, for each of
    its mounts, so their identical findings are reported once). An unsatisfied need that
    names a source which failed to parse says so, rather than suggesting other nodes."""
    need = resolution.need
    span = need.span
    found = [diag.make("facet_not_emitted", p.message, span) for p in problems]
    label = need_label(need)
    if resolution.status == "ambiguous":
        rung = resolution.rung.value if resolution.rung else "?"
        found.append(
            diag.make(
                "wiring_ambiguous",
                f"need {label} of `{sub}` matches {len(resolution.candidates)} producer facets "
                f"on the {rung} rung ({', '.join(resolution.candidates)}); add a "
                "`[[wiring.pin]]` in prose.toml or name the producer (`producer.facet`), or "
                "say `every` to subscribe to all",
                span,
            )
        )
    elif resolution.status == "unsatisfied" and not problems:
        named = _broken_named(need, broken)
        hint = (
            f"`{named.name}` is defined in `{named.path}`, but that file failed to parse "
            f"({named.reason}); fix it and the need can be wired"
            if named is not None
            else "did you mean " + ", ".join(f"`{c}`" for c in resolution.candidates) + "?"
            if resolution.candidates
            else "no producer shares a word with it"
        )
        found.append(
            diag.make(
                "wiring_unsatisfied",
                f"no producer satisfies need {label} of `{sub}`; {hint}",
                span,
            )
        )
    elif resolution.status == "self":
        found.append(
            diag.make(
                "wiring_self",
                f"need {label} names `{sub}` itself; a node never subscribes to itself "
                "(re-reading its prior truth is `self-driven` continuity), so no edge is drawn",
                span,
            )
        )
    elif resolution.rung is Rung.MENTIONED and resolution.edges:
        explicit = ", ".join(f"`{e.producer}.{e.facet}`" for e in resolution.edges)
        found.append(
            diag.make(
                "wiring_mentioned",
                f"need {label} of `{sub}` is wired only because its prose mentions the "
                f"producer ({resolution.evidence}); write {explicit} to make it explicit",
                span,
                _mentioned_fix(need, resolution.edges),
            )
        )
    return found


def _mentioned_fix(need: Need, edges: Sequence[Edge]) -> Fix | None:
    """Name the one producer the prose mentions, so the qualified rung draws the same edge."""
    if len({(e.producer, e.facet) for e in edges}) != 1:
        return None
    reference = qualifier(edges[0].producer, edges[0].facet)
    end = need.span
    at = Span(
        path=end.path,
        line=end.end_line,
        column=end.end_column,
        end_line=end.end_line,
        end_column=end.end_column,
    )
    text = f"\n\nFrom {reference}." if need.facet_need else f" (from {reference})"
    return Fix(title=f"Name the producer: {reference}", edits=(DiagEdit(span=at, new_text=text),))


def _broken_named(need: Need, broken: Mapping[str, Broken]) -> Broken | None:
    """The failed source a need names: its leading name, a backticked token or a
    `producer.facet` head."""
    if not broken:
        return None
    names = [need.name or ""] + [t.text for t in analyze(need.text, need.name).code]
    for name in names:
        hit = broken.get(key(name.partition(".")[0])) if name else None
        if hit is not None:
            return hit
    return None


def need_label(need: Need) -> str:
    """How diagnostics and `prosec explain` name a need."""
    if need.name:
        return f"`{need.name}`"
    text = " ".join(need.text.split())
    return f'"{text[:48]}…"' if len(text) > 48 else f'"{text}"'


def find_need(reference: str, needs: Sequence[Need]) -> int | None:
    """A pin's `need`: `#N`, the need's name, or a unique piece of its text (1-based)."""
    reference = reference.strip()
    if reference.startswith("#") and reference[1:].isdigit():
        number = int(reference[1:])
        return number if 1 <= number <= len(needs) else None
    for position, need in enumerate(needs, start=1):
        if need.name and (need.name == reference or key(need.name) == key(reference)):
            return position
    lowered = reference.lower()
    hits = [i for i, need in enumerate(needs, start=1) if lowered in need.text.lower()]
    return hits[0] if len(hits) == 1 else None


def _pins(
    config: Config, index: ProducerIndex
) -> tuple[dict[tuple[str, int], list[WiringPin]], list[Diagnostic]]:
    result: dict[tuple[str, int], list[WiringPin]] = {}
    found: list[Diagnostic] = []
    for pin in config.pins:
        problem, subscriber, position, producer = _check_pin(pin, index)
        if problem is not None:
            found.append(diag.make("pin_stale", problem, _pin_span(config, pin)))
            continue
        assert subscriber is not None and position is not None and producer is not None
        pinned = replace(pin, subscriber=subscriber, producer=producer)
        result.setdefault((subscriber, position), []).append(pinned)
    return result, found


def _check_pin(
    pin: WiringPin, index: ProducerIndex
) -> tuple[str | None, str | None, int | None, str | None]:
    where = f"pin {pin.subscriber} / {pin.need!r} → {pin.producer}.{pin.facet}"
    subscriber = index.node(pin.subscriber)
    if subscriber is None:
        return f"{where}: no node `{pin.subscriber}` in this project", None, None, None
    needs = index.producers[subscriber].contract.needs
    position = find_need(pin.need, needs)
    if position is None:
        listed = ", ".join(need_label(n) for n in needs) or "none"
        return (
            f"{where}: `{subscriber}` has no single need {pin.need!r} ({listed})",
            None,
            None,
            None,
        )
    producer = index.node(pin.producer)
    if producer is None:
        return f"{where}: no node `{pin.producer}` in this project", None, None, None
    if not index.producers[producer].emits(pin.facet):
        facets = ", ".join(("@atomic", *index.producers[producer].facets))
        return f"{where}: `{producer}` emits no facet `{pin.facet}` ({facets})", None, None, None
    return None, subscriber, position, producer


def _pin_span(config: Config, pin: WiringPin) -> Span:
    path = config.path.name if config.path is not None else "prose.toml"
    return Span(path=path, line=pin.line, column=1, end_line=pin.line, end_column=15)
