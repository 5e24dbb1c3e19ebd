"""The topology as an SVG document: one box per node, one curve per subscribed facet.

The browser never lays anything out: it finds the elements by their `data-node` and
`data-edge` attributes and toggles classes as receipts play. Parallel facets between
the same two nodes are drawn as separate curves a few pixels apart, so each lights on
its own. Every string is escaped; the output is deterministic.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from xml.sax.saxutils import escape, quoteattr

from .layout import Layout
from .timeline import TopologyEdge

__all__ = ["render_svg"]

FACET_SPREAD = 5.0


def render_svg(
    layout: Layout,
    edges: Sequence[TopologyEdge],
    kinds: Mapping[str, str],
    labels: Mapping[str, str] | None = None,
) -> str:
    """`kinds` maps a node to its wake source (input, self, external): its box style."""
    text = labels or {}
    width, height = round(layout.width), round(layout.height)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="dag" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="topology">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z"/>'
        "</marker></defs>",
        '<g class="edges">',
    ]
    lanes: dict[tuple[str, str], list[int]] = {}
    for i, edge in enumerate(edges):
        lanes.setdefault((edge.producer, edge.subscriber), []).append(i)
    for i, edge in enumerate(edges):
        route = layout.routes.get((edge.producer, edge.subscriber))
        if route is None:
            continue
        group = lanes[(edge.producer, edge.subscriber)]
        offset = (group.index(i) - (len(group) - 1) / 2) * FACET_SPREAD
        title = f"{edge.producer} → {edge.subscriber} ({edge.facet})"
        out.append(
            f'<path class="edge" data-edge="{i}" data-producer={quoteattr(edge.producer)} '
            f"data-subscriber={quoteattr(edge.subscriber)} data-facet={quoteattr(edge.facet)} "
            f'd="{_curve(route, offset)}" marker-end="url(#arrow)"><title>{escape(title)}</title></path>'
        )
    out.append("</g>")
    out.append('<g class="nodes">')
    for name in sorted(layout.boxes):
        box = layout.boxes[name]
        label = text.get(name, name)
        shown = label if len(label) <= 40 else label[:39] + "…"
        kind = kinds.get(name, "input")
        out.append(
            f'<g class="node kind-{escape(kind)}" data-node={quoteattr(name)} '
            f'transform="translate({_n(box.x)},{_n(box.y)})" tabindex="0">'
            f"<title>{escape(name)}</title>"
            f'<rect width="{_n(box.width)}" height="{_n(box.height)}" rx="6"/>'
            f'<text x="{_n(box.width / 2)}" y="{_n(box.height / 2 + 4)}">{escape(shown)}</text>'
            "</g>"
        )
    out.append("</g></svg>")
    return "".join(out)


def _curve(route: Sequence[tuple[float, float]], offset: float) -> str:
    """A smooth path through the route's points (horizontal tangents at each point)."""
    points = [(x, y + offset) for x, y in route]
    parts = [f"M {_n(points[0][0])} {_n(points[0][1])}"]
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        mid = (x0 + x1) / 2
        parts.append(f"C {_n(mid)} {_n(y0)} {_n(mid)} {_n(y1)} {_n(x1)} {_n(y1)}")
    return " ".join(parts)


def _n(value: float) -> str:
    """A coordinate with at most one decimal, no trailing zeros."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text
