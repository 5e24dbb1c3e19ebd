"""Completion: section headings after `###`; producers and their facets inside Requires."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..ir import ATOMIC_FACET, KINDS, NODE_KINDS, Contract, Span
from ..rules.sections import SECTION_DOCS, SECTION_KINDS
from .locate import contract_at, section_at
from .workspace import Analysis

_HEADING = re.compile(r"^ {0,3}###(?P<space>[ \t]*)(?P<word>[\w ]*)$")
_QUALIFIED = re.compile(r"(?P<producer>[\w@-][\w@.-]*)\.(?P<word>[\w:-]*)$")
_WORD = re.compile(r"[\w:-]*$")
_FACET_NEED = re.compile(r"^ {0,3}####[ \t]+(?P<word>[\w:-]*)$")


@dataclass(frozen=True, slots=True)
class Completion:
    """One proposal: `new_text` replaces the typed prefix in `replace`."""

    label: str
    kind: str  # "section" | "producer" | "facet"
    detail: str
    documentation: str
    new_text: str
    replace: Span
    sort_text: str


def complete(analysis: Analysis, display: str, line: int, column: int) -> list[Completion]:
    source = analysis.source(display)
    if source is None:
        return []
    text = analysis.index(display).line(line)
    prefix = text[: column - 1]
    contract = contract_at(source, line)
    heading = _HEADING.match(prefix)
    if heading is not None and not prefix.lstrip().startswith("####"):
        start = heading.start("word") + 1
        lead = "" if heading.group("space") else " "
        span = Span(path=display, line=line, column=start, end_line=line, end_column=column)
        return _sections(contract, line, span, lead)
    if contract is None:
        return []
    section = section_at(contract, line)
    if section is None or section.key != "requires" or section.heading_span.line == line:
        return []
    facet_need = _FACET_NEED.match(prefix)
    if facet_need is not None:  # a `####` facet-need is named like the facet it wants
        start = facet_need.start("word") + 1
        span = Span(path=display, line=line, column=start, end_line=line, end_column=column)
        return [
            f
            for node in _producers_of(analysis, contract)
            for f in _facets(node, span, qualified_label=False)
        ]
    qualified = _QUALIFIED.search(prefix)
    if qualified is not None:
        producer = analysis.node(qualified.group("producer").lstrip("`"))
        if producer is not None and producer.name != contract.name:
            start = qualified.start("word") + 1
            span = Span(path=display, line=line, column=start, end_line=line, end_column=column)
            return _facets(producer, span, qualified_label=False)
    word = _WORD.search(prefix)
    start = (word.start() if word is not None else len(prefix)) + 1
    span = Span(path=display, line=line, column=start, end_line=line, end_column=column)
    return _producers(analysis, contract, span)


def _sections(contract: Contract | None, line: int, span: Span, lead: str) -> list[Completion]:
    kind = contract.kind if contract is not None else "unknown"
    present = set()
    if contract is not None:
        present = {s.key for s in contract.sections if s.heading_span.line != line}
    found = []
    for order, (key, kinds) in enumerate(SECTION_KINDS.items()):
        if key in present or (kind in KINDS and kind not in kinds):
            continue
        title = key.title()
        found.append(
            Completion(
                label=title,
                kind="section",
                detail="applies to: " + ", ".join(k for k in KINDS if k in kinds),
                documentation=SECTION_DOCS[key],
                new_text=lead + title,
                replace=span,
                sort_text=f"{order:03d}",
            )
        )
    return found


def _producers_of(analysis: Analysis, contract: Contract) -> list[Contract]:
    """The nodes `contract` may subscribe to: every other responsibility and gateway."""
    return sorted(
        (c for c in analysis.project.contracts if c.kind in NODE_KINDS and c.name != contract.name),
        key=lambda c: c.name,
    )


def _producers(analysis: Analysis, contract: Contract, span: Span) -> list[Completion]:
    found = []
    for node in _producers_of(analysis, contract):
        facets = ", ".join(f"`{f.name}`" for f in node.facets) or f"`{ATOMIC_FACET}` only"
        found.append(
            Completion(
                label=node.name,
                kind="producer",
                detail=f"{node.kind}" + (f": {node.title}" if node.title else ""),
                documentation=f"Maintains facets: {facets} ({node.path})",
                new_text=node.name,
                replace=span,
                sort_text=f"0{node.name}",
            )
        )
        found.extend(_facets(node, span, qualified_label=True))
    return found


def _facets(node: Contract, span: Span, *, qualified_label: bool) -> list[Completion]:
    found = []
    for facet in node.facets:
        label = f"{node.name}.{facet.name}" if qualified_label else facet.name
        found.append(
            Completion(
                label=label,
                kind="facet",
                detail=f"facet of {node.kind} `{node.name}`",
                documentation=facet.body.text or f"`#### {facet.heading}`",
                new_text=label,
                replace=span,
                sort_text=f"1{label}",
            )
        )
    return found
