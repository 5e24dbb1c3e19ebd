"""Go to definition, find references, document symbols and workspace symbols."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..ir import ATOMIC_FACET, Contract, SourceFile, Span
from . import wiring
from .locate import covers, target_at
from .workspace import Analysis

MAX_WORKSPACE_SYMBOLS = 500


@dataclass(frozen=True, slots=True)
class Symbol:
    """One outline entry: `kind` is a contract kind, "section", "facet" or "need"."""

    name: str
    kind: str
    detail: str
    span: Span
    selection: Span
    children: tuple[Symbol, ...] = ()


def definition(analysis: Analysis, display: str, line: int, column: int) -> list[Span]:
    """From a need to the facet headings it is wired to (the candidates when ambiguous);
    from a `use "…"` or a `pattern:` reference to the file it resolved to (in deps/)."""
    source = analysis.source(display)
    if source is None:
        return []
    imported = _import_target(analysis, source, line, column)
    if imported is not None:
        return [imported]
    target = target_at(source, line, column)
    if target.need is None:
        return []
    found = wiring.resolution(analysis.topology, target.need)
    if found is None:
        return []
    pairs = [(e.producer, e.facet) for e in found.edges]
    if not pairs and found.status == "ambiguous":
        pairs = [wiring.split_candidate(analysis, c) for c in found.candidates]
    spans = (wiring.facet_target(analysis, producer, facet) for producer, facet in pairs)
    return _unique(s for s in spans if s is not None)


def _import_target(analysis: Analysis, source: SourceFile, line: int, column: int) -> Span | None:
    """The name of the contract a reference under the cursor resolved to."""
    for item in source.imports:
        if item.target is None or not covers(item.span, line, column):
            continue
        target = analysis.source(item.target)
        if target is None:  # a local file outside the project: its first line
            return Span(path=item.target, line=1, column=1, end_line=1, end_column=1)
        head = next((c for c in target.contracts if not c.inline), None)
        if head is not None:
            return head.name_span
        return Span(path=target.path, line=1, column=1, end_line=1, end_column=1)
    return None


def references(
    analysis: Analysis, display: str, line: int, column: int, include_declaration: bool
) -> list[Span]:
    """From a facet heading (or `### Maintains` for @atomic, or a node's name) to the needs
    that subscribe to it."""
    source = analysis.source(display)
    if source is None:
        return []
    target = target_at(source, line, column)
    contract = target.contract
    if contract is None:
        return []
    facet: str | None
    if (
        target.facet is not None
        and target.section is not None
        and target.section.key == "maintains"
    ):
        facet, declaration = target.facet.name, target.facet.heading_span
    elif target.heading is not None and target.heading.key == "maintains":
        facet, declaration = ATOMIC_FACET, target.heading.heading_span
    elif target.on_name:
        facet, declaration = None, contract.name_span
    else:
        return []
    edges = wiring.subscribers(analysis.topology, contract.name, facet)
    spans = [wiring.subscriber_span(analysis, edge) for edge in edges]
    found = [s for s in spans if s is not None]
    return _unique([declaration, *found] if include_declaration else found)


def _unique(spans: Iterable[Span]) -> list[Span]:
    seen: dict[Span, None] = {}
    for span in spans:
        seen.setdefault(span, None)
    return list(seen)


def document_symbols(source: SourceFile) -> list[Symbol]:
    return [_contract_symbol(contract) for contract in source.contracts if contract.name]


def _contract_symbol(contract: Contract) -> Symbol:
    sections = []
    for section in contract.sections:
        children = [
            Symbol(f.name, "facet", "facet", f.span, f.heading_span) for f in section.facets
        ]
        children += [
            Symbol(n.name or _first_words(n.text), "need", "need", n.span, n.name_span or n.span)
            for n in section.needs
        ]
        sections.append(
            Symbol(
                section.title,
                "section",
                section.value,
                section.span,
                section.heading_span,
                tuple(children),
            )
        )
    span = contract.span
    if not span.contains(contract.name_span):
        span = contract.name_span
    return Symbol(
        contract.name, contract.kind, contract.kind, span, contract.name_span, tuple(sections)
    )


def _first_words(text: str, limit: int = 6) -> str:
    words = text.split()
    return " ".join(words[:limit]) + (" …" if len(words) > limit else "")


def workspace_symbols(analyses: Iterable[Analysis], query: str) -> list[tuple[Analysis, Symbol]]:
    """Every node (any contract kind) across the projects, filtered by a fuzzy query."""
    found = []
    for analysis in analyses:
        for contract in analysis.project.contracts:
            if contract.name and _fuzzy(query, contract.name):
                detail = contract.title or contract.kind
                symbol = Symbol(
                    contract.name, contract.kind, detail, contract.name_span, contract.name_span
                )
                found.append((analysis, symbol))
    found.sort(key=lambda pair: (pair[1].name.lower(), str(pair[0].root), pair[1].span.path))
    return found[:MAX_WORKSPACE_SYMBOLS]


def _fuzzy(query: str, name: str) -> bool:
    """Case-insensitive subsequence match: `dlog` matches `decisions-log`."""
    rest = iter(name.lower())
    return all(ch in rest for ch in query.lower() if not ch.isspace())
