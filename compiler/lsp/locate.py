"""What sits at a point of a source file: its contract, section, facet, need or name."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Contract, Facet, Need, Section, SourceFile, Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """The innermost structural elements around a cursor (1-based line, code-point column)."""

    contract: Contract | None = None
    section: Section | None = None  # the section whose region holds the line
    heading: Section | None = None  # set when the cursor is on the section's `###` heading
    facet: Facet | None = None  # set when the cursor is on a `####` facet heading
    need: Need | None = None  # set when the cursor is inside a Requires need
    on_name: bool = False  # the cursor is on the contract's name (frontmatter or `##`)


def covers(span: Span, line: int, column: int) -> bool:
    """Whether the point lies in `span`; the end is inclusive so a cursor after a word counts."""
    return (span.line, span.column) <= (line, column) <= (span.end_line, span.end_column)


def contract_at(source: SourceFile, line: int) -> Contract | None:
    """The contract whose region a line belongs to (blank lines go to the one above)."""
    found = None
    for contract in source.contracts:
        if contract.span.line <= line or contract is source.contracts[0]:
            found = contract
    return found


def section_at(contract: Contract, line: int) -> Section | None:
    found = None
    for section in contract.sections:
        if section.heading_span.line <= line:
            found = section
    return found


def target_at(source: SourceFile, line: int, column: int) -> Target:
    contract = contract_at(source, line)
    if contract is None:
        return Target()
    on_name = covers(contract.name_span, line, column)
    section = section_at(contract, line)
    if section is None:
        return Target(contract=contract, on_name=on_name)
    if covers(section.heading_span, line, column):
        return Target(contract=contract, section=section, heading=section)
    facet = next((f for f in section.facets if covers(f.heading_span, line, column)), None)
    need = next((n for n in section.needs if covers(n.span, line, column)), None)
    return Target(contract=contract, section=section, facet=facet, need=need, on_name=on_name)
