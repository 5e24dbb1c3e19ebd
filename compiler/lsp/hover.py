"""Hover text: what a section means, where a need is wired and why, who reads a facet."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import ATOMIC_FACET, KINDS, Contract, Edge, Facet, Need, Section, Span
from ..rules.sections import RETIRED_SECTIONS, SECTION_DOCS, SECTION_KINDS
from . import wiring
from .locate import target_at
from .workspace import Analysis


@dataclass(frozen=True, slots=True)
class Hover:
    markdown: str
    span: Span


def hover(analysis: Analysis, display: str, line: int, column: int) -> Hover | None:
    source = analysis.source(display)
    if source is None:
        return None
    target = target_at(source, line, column)
    contract = target.contract
    if contract is None:
        return None
    if target.heading is not None:
        return Hover(section_text(analysis, contract, target.heading), target.heading.heading_span)
    if (
        target.facet is not None
        and target.section is not None
        and target.section.key == "maintains"
    ):
        return Hover(facet_text(analysis, contract, target.facet), target.facet.heading_span)
    if target.need is not None:
        return Hover(need_text(analysis, contract, target.need), target.need.span)
    if target.on_name:
        return Hover(node_text(analysis, contract), contract.name_span)
    return None


def section_text(analysis: Analysis, contract: Contract, section: Section) -> str:
    key, kind = section.key, contract.kind
    lines = [f"**`### {section.title}`**"]
    if key in RETIRED_SECTIONS:
        folds_into, successors = RETIRED_SECTIONS[key]
        lines.append(f"Retired section: it folds into {folds_into}.")
        if kind in successors:
            lines.append(f"For a {kind}, rename it to `### {successors[kind]}`.")
        return "\n\n".join(lines)
    if key not in SECTION_KINDS:
        lines.append("Not an OpenProse section; prosec keeps it as documentation.")
        return "\n\n".join(lines)
    lines.append(SECTION_DOCS[key])
    applies = SECTION_KINDS[key]
    lines.append("Applies to: " + ", ".join(k for k in KINDS if k in applies) + ".")
    if kind in KINDS and kind not in applies:
        lines.append(f"This contract is a {kind}: the section does not apply to it.")
    if key == "requires":
        lines.append(_requires_summary(analysis, section))
    elif key == "continuity" and contract.continuity is not None:
        continuity = contract.continuity
        cadence = f", cadence `{continuity.cadence}`" if continuity.cadence else ""
        lines.append(f"Read as: **{continuity.wake_source.value}-driven**{cadence}.")
    elif key == "maintains" and analysis.topology is not None:
        lines.append(_readers(analysis, wiring.subscribers(analysis.topology, contract.name)))
    return "\n\n".join(line for line in lines if line)


def _requires_summary(analysis: Analysis, section: Section) -> str:
    if analysis.topology is None or not section.needs:
        return ""
    counts: dict[str, int] = {}
    for need in section.needs:
        found = wiring.resolution(analysis.topology, need)
        status = found.status if found is not None else "not resolved"
        counts[status] = counts.get(status, 0) + 1
    parts = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    return f"Wiring: {len(section.needs)} need(s): {parts}."


def need_text(analysis: Analysis, contract: Contract, need: Need) -> str:
    title = f"**Need** `{need.name}`" if need.name else "**Need**"
    lines = [f"{title} of `{contract.name}`"]
    if analysis.topology is None or contract.path not in analysis.wired:
        lines.append(_no_wiring(analysis, contract))
        return "\n\n".join(lines)
    found = wiring.resolution(analysis.topology, need)
    if found is None:
        lines.append("Forme did not resolve this need (its contract is not a node).")
        return "\n\n".join(lines)
    rung = f" on the **{found.rung.value}** rung" if found.rung is not None else ""
    if found.status == "wired":
        lines.append(f"Wired{rung}: {found.evidence}" if found.evidence else f"Wired{rung}.")
        lines.append("\n".join(_edge_line(edge) for edge in found.edges))
    elif found.status == "ambiguous":
        lines.append(
            f"**Ambiguous**{rung}: several producers match, so it is left unwired "
            f"({found.evidence}). Name the producer (`producer.facet`) or pin one in "
            "`prose.toml`; the code actions do either."
        )
        lines.append("Candidates: " + ", ".join(f"`{c}`" for c in found.candidates))
    elif found.status == "unsatisfied":
        lines.append(f"**Unsatisfied**: {found.evidence or 'no producer matches'}.")
        if found.candidates:
            lines.append("Closest producers: " + ", ".join(f"`{c}`" for c in found.candidates))
    elif found.status == "self":
        lines.append(
            f"Names `{contract.name}` itself ({found.evidence}): no edge is drawn; "
            "re-reading its own truth is self-driven continuity."
        )
    else:
        lines.append(f"Not wired: {found.evidence or found.status}.")
    return "\n\n".join(lines)


def _no_wiring(analysis: Analysis, contract: Contract) -> str:
    if contract.path not in analysis.wired and analysis.topology is not None:
        return "Not wired: this file is outside the source root that `prosec build` compiles."
    return "Wiring is not available for this project."


def _edge_line(edge: Edge) -> str:
    return f"- `{edge.producer}` facet `{edge.facet}`"


def facet_text(analysis: Analysis, contract: Contract, facet: Facet) -> str:
    lines = [f"**Facet** `{facet.name}` of `{contract.name}`"]
    if analysis.topology is None or contract.path not in analysis.wired:
        lines.append(_no_wiring(analysis, contract))
    else:
        lines.append(
            _readers(analysis, wiring.subscribers(analysis.topology, contract.name, facet.name))
        )
    return "\n\n".join(lines)


def _readers(analysis: Analysis, edges: list[Edge]) -> str:
    if not edges:
        return "No node subscribes to it."
    rows = []
    for edge in edges:
        need = f" need `{edge.need.name}`" if edge.need is not None and edge.need.name else ""
        facet = "" if edge.facet == ATOMIC_FACET else f" → `{edge.facet}`"
        rows.append(f"- `{edge.subscriber}`{need}{facet} (rung **{edge.rung.value}**)")
    return "Subscribed by:\n" + "\n".join(rows)


def node_text(analysis: Analysis, contract: Contract) -> str:
    head = f"**{contract.kind}** `{contract.name}`"
    if contract.title:
        head += f": {contract.title}"
    lines = [head]
    if contract.id:
        lines.append(f"id `{contract.id}`")
    if analysis.topology is not None:
        mounted = sorted(wiring.mounts(analysis.topology, contract.name) - {contract.name})
        if mounted:
            lines.append(
                f"Template over `{contract.template_parameter}`, mounted as "
                + ", ".join(f"`{m}`" for m in mounted)
            )
        inputs = sorted({f"`{e.producer}`" for e in wiring.feeds(analysis.topology, contract.name)})
        readers = sorted(
            {f"`{e.subscriber}`" for e in wiring.subscribers(analysis.topology, contract.name)}
        )
        if inputs:
            lines.append("Reads from: " + ", ".join(inputs))
        if readers:
            lines.append("Read by: " + ", ".join(readers))
    return "\n\n".join(lines)
