"""Mutable builders a parse fills in order, and their freezing into the typed IR."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..discover import source_stem as _stem
from ..frozen import FrozenMap, freeze
from ..ir import (
    Body,
    Clause,
    Contract,
    Facet,
    Fence,
    Item,
    Need,
    PatternInstance,
    Section,
    Span,
    Text,
)
from . import items as item_shapes
from .lines import Lines


@dataclass
class BodyBuilder:
    paragraphs: list[Text] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    clauses: list[Clause] = field(default_factory=list)
    fences: list[Fence] = field(default_factory=list)
    subheadings: list[Text] = field(default_factory=list)

    def freeze(self) -> Body:
        return Body(
            paragraphs=tuple(self.paragraphs),
            items=tuple(self.items),
            clauses=tuple(self.clauses),
            fences=tuple(self.fences),
            subheadings=tuple(self.subheadings),
        )


@dataclass
class FacetBuilder:
    name: str
    heading: str
    heading_span: Span
    body: BodyBuilder = field(default_factory=BodyBuilder)
    end_line: int = 0


@dataclass
class SectionBuilder:
    key: str
    title: str
    value: str
    heading_span: Span
    body: BodyBuilder = field(default_factory=BodyBuilder)
    facets: list[FacetBuilder] = field(default_factory=list)  # Maintains facets / Requires needs
    end_line: int = 0


@dataclass
class ContractBuilder:
    start_line: int
    name_span: Span
    inline_name: str | None = None
    title: str | None = None
    preamble: BodyBuilder = field(default_factory=BodyBuilder)
    sections: list[SectionBuilder] = field(default_factory=list)
    patterns: list[PatternInstance] = field(default_factory=list)
    end_line: int = 0


def freeze_contract(
    at: Lines,
    builder: ContractBuilder,
    position: int,
    frontmatter: dict[str, Any],
    fm_spans: dict[str, Span],
) -> Contract:
    sections = fold_facets(tuple(freeze_section(at, s) for s in builder.sections))
    span = at.region_span(builder.start_line, builder.end_line)
    if position == 0:
        name = _scalar(frontmatter.get("name")) or builder.title or _stem(at.path)
        kind = _scalar(frontmatter.get("kind")) or "unknown"
        name_span = fm_spans.get("name") or at.span(1, 1, 1, len(at.line_text(1)) + 1)
        return Contract(
            name=name,
            kind=kind.strip(),
            span=span,
            name_span=name_span,
            path=at.path,
            title=builder.title,
            id=_scalar(frontmatter.get("id")),
            subject=_scalar(frontmatter.get("subject")),
            version=_scalar(frontmatter.get("version")),
            frontmatter=freeze(frontmatter),
            frontmatter_spans=FrozenMap(fm_spans),
            preamble=builder.preamble.freeze(),
            sections=sections,
            pattern_instances=tuple(builder.patterns),
        )
    return Contract(
        name=(builder.inline_name or "").strip(),
        kind=infer_inline_kind(sections),
        span=span,
        name_span=builder.name_span,
        path=at.path,
        inline=True,
        parent=_scalar(frontmatter.get("name")) or _stem(at.path),
        preamble=builder.preamble.freeze(),
        sections=sections,
        pattern_instances=tuple(builder.patterns),
    )


def freeze_section(at: Lines, builder: SectionBuilder) -> Section:
    span = at.region_span(builder.heading_span.line, builder.end_line)
    facets: tuple[Facet, ...] = ()
    needs: tuple[Need, ...] = ()
    if builder.key in ("maintains", "facets"):
        facets = tuple(
            Facet(
                name=f.name,
                heading=f.heading,
                span=at.region_span(f.heading_span.line, f.end_line),
                heading_span=f.heading_span,
                body=f.body.freeze(),
            )
            for f in builder.facets
        )
    elif builder.key == "requires":
        needs = _needs(at, builder)
    return Section(
        key=builder.key,
        title=builder.title,
        value=builder.value,
        span=span,
        heading_span=builder.heading_span,
        body=builder.body.freeze(),
        facets=facets,
        needs=needs,
    )


def _needs(at: Lines, builder: SectionBuilder) -> tuple[Need, ...]:
    needs: list[Need] = []
    for item in builder.body.items:
        needs.append(
            Need(
                name=item.name,
                text=item_shapes.flatten(item),
                span=item.span,
                name_span=item.name_span,
                run_typed=item_shapes.run_type(item.description),
            )
        )
    if not needs and not builder.facets:
        for paragraph in builder.body.paragraphs:
            if not item_shapes.is_none_marker(paragraph.text):
                needs.append(Need(name=None, text=paragraph.text, span=paragraph.span))
    for facet in builder.facets:
        body = facet.body.freeze()
        needs.append(
            Need(
                name=facet.name,
                text=" ".join(part for part in (facet.heading, body.text) if part),
                span=at.region_span(facet.heading_span.line, facet.end_line),
                name_span=facet.heading_span,
                facet_need=True,
            )
        )
    return tuple(needs)


def fold_facets(sections: tuple[Section, ...]) -> tuple[Section, ...]:
    """`####` facets of a `### Facets` block join the contract's `### Maintains` facets."""
    extra = tuple(f for s in sections if s.key == "facets" for f in s.facets)
    target = next((i for i, s in enumerate(sections) if s.key == "maintains"), None)
    if not extra or target is None:
        return sections
    folded = []
    for index, section in enumerate(sections):
        if index == target:
            section = replace(section, facets=section.facets + extra)
        elif section.key == "facets":
            section = replace(section, facets=())
        folded.append(section)
    return tuple(folded)


_INLINE_KIND_MARKERS = (
    ("gateway", ("receives", "emits", "payload", "schedule")),
    ("responsibility", ("maintains", "requires", "continuity")),
    ("function", ("parameters", "returns")),
    ("pattern", ("slots", "delegation")),
    ("test", ("fixtures", "expects")),
)


def infer_inline_kind(sections: tuple[Section, ...]) -> str:
    """An inline `##` node has no frontmatter: its sections say what it is."""
    keys = {s.key for s in sections}
    if "continuity" in keys:
        continuity = next(s for s in sections if s.key == "continuity")
        if "external" in (continuity.value + continuity.body.text).lower() and (
            keys & {"receives", "emits", "payload", "schedule"}
        ):
            return "gateway"
    for kind, markers in _INLINE_KIND_MARKERS[1:]:
        if keys & set(markers):
            return kind
    return "function"


def _scalar(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    return str(value).strip() or None
