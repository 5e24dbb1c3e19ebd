"""A layered drawing of the topology (Sugiyama style), computed once in Python.

Layers are topological generations (a node one column right of its deepest producer,
from the runtime's graphlib order); an edge that spans several columns passes through a placeholder point in
each, so crossings can be reduced for it too; each column is ordered by the median
position of its neighbours, sweeping left-to-right and back a fixed number of times;
ties break by name, so the same topology always gets the same picture.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..graphs import find_cycle, topological_order

__all__ = ["Box", "Layout", "layered_layout"]

COLUMN_GAP = 96  # horizontal space between two columns
ROW_GAP = 22  # vertical space between two boxes of a column
BOX_HEIGHT = 40
CHAR_WIDTH = 7.2  # of the 12px monospace label font
PAD = 24
SWEEPS = 8


@dataclass(frozen=True, slots=True)
class Box:
    """A node's box: its column, row and top-left corner."""

    name: str
    layer: int
    row: int
    x: float
    y: float
    width: float
    height: float = BOX_HEIGHT


@dataclass(frozen=True, slots=True)
class Layout:
    """Boxes by node, each edge's polyline (producer's right side to subscriber's left
    side, through its placeholders), and the drawing's size."""

    boxes: dict[str, Box]
    routes: dict[tuple[str, str], tuple[tuple[float, float], ...]]
    width: float
    height: float


def layered_layout(
    nodes: Sequence[str], links: Iterable[tuple[str, str]], labels: dict[str, str] | None = None
) -> Layout:
    """Lay out `nodes` with (producer, subscriber) `links` left to right."""
    names = sorted(set(nodes))
    known = set(names)
    pairs = sorted({(a, b) for a, b in links if a != b and a in known and b in known})
    # draw what there is: each cycle broken by leaving its edges out (the runtime's one
    # cycle check, so a drawing with several cycles needs no other graph library)
    while cycle := find_cycle(names, pairs):
        broken = set(itertools.pairwise(cycle))
        pairs = [pair for pair in pairs if pair not in broken]
    # a node's column is its longest path from a source: right after its deepest producer
    producers: dict[str, list[str]] = {name: [] for name in names}
    for a, b in pairs:
        producers[b].append(a)
    layer: dict[str, int] = {}
    for name in topological_order(names, pairs):
        layer[name] = max((layer[p] + 1 for p in producers[name]), default=0)
    columns, chains = _with_placeholders(names, pairs, layer)
    _order(columns, chains)
    text = labels or {}
    widths = [
        max((_width(text.get(n, n)) for n in column if not n.startswith("\0")), default=40.0)
        for column in columns
    ]
    tallest = max((len(c) for c in columns), default=1)
    height = 2 * PAD + tallest * BOX_HEIGHT + (tallest - 1) * ROW_GAP
    boxes: dict[str, Box] = {}
    points: dict[str, tuple[float, float]] = {}
    x = float(PAD)
    for depth, column in enumerate(columns):
        used = len(column) * BOX_HEIGHT + (len(column) - 1) * ROW_GAP
        y = (height - used) / 2
        for row, name in enumerate(column):
            if name.startswith("\0"):
                points[name] = (x + widths[depth] / 2, y + BOX_HEIGHT / 2)
            else:
                boxes[name] = Box(name, depth, row, x, y, widths[depth])
            y += BOX_HEIGHT + ROW_GAP
        x += widths[depth] + COLUMN_GAP
    routes = {}
    for (a, b), via in chains.items():
        start, end = boxes[a], boxes[b]
        routes[(a, b)] = (
            (start.x + start.width, start.y + start.height / 2),
            *(points[p] for p in via),
            (end.x, end.y + end.height / 2),
        )
    return Layout(boxes, routes, max(x - COLUMN_GAP + PAD, 2 * PAD), float(height))


def _width(label: str) -> float:
    return round(max(12, min(len(label), 40)) * CHAR_WIDTH + 20, 1)


def _with_placeholders(
    nodes: list[str], pairs: list[tuple[str, str]], layer: dict[str, int]
) -> tuple[list[list[str]], dict[tuple[str, str], list[str]]]:
    depth = max(layer.values(), default=0) + 1
    columns: list[list[str]] = [[] for _ in range(depth)]
    for name in nodes:
        columns[layer[name]].append(name)
    chains: dict[tuple[str, str], list[str]] = {}
    for a, b in pairs:
        via = [f"\0{a}\0{b}\0{d}" for d in range(layer[a] + 1, layer[b])]
        for d, placeholder in zip(range(layer[a] + 1, layer[b]), via, strict=True):
            columns[d].append(placeholder)
        chains[(a, b)] = via
    return columns, chains


def _order(columns: list[list[str]], chains: dict[tuple[str, str], list[str]]) -> None:
    """Reorder each column in place by the median row of its neighbours (both sides)."""
    left: dict[str, list[str]] = {}
    right: dict[str, list[str]] = {}
    for (a, b), via in chains.items():
        path = [a, *via, b]
        for u, v in itertools.pairwise(path):
            right.setdefault(u, []).append(v)
            left.setdefault(v, []).append(u)
    for sweep in range(SWEEPS):
        forward = sweep % 2 == 0
        indices = range(1, len(columns)) if forward else range(len(columns) - 2, -1, -1)
        for i in indices:
            fixed = columns[i - 1] if forward else columns[i + 1]
            rows = {name: r for r, name in enumerate(fixed)}
            near = left if forward else right
            current = {name: r for r, name in enumerate(columns[i])}
            columns[i].sort(key=functools.partial(_median_key, rows, near, current))


def _median_key(
    rows: dict[str, int], near: dict[str, list[str]], current: dict[str, int], name: str
) -> tuple[float, int, str]:
    """Sort key: the median row of the node's neighbours in the fixed column; a node
    without neighbours there keeps its row (after those that have some)."""
    found = sorted(rows[n] for n in near.get(name, ()) if n in rows)
    if not found:
        return (float(current[name]), 1, name)
    middle = len(found) // 2
    median = found[middle] if len(found) % 2 else (found[middle - 1] + found[middle]) / 2
    return (float(median), 0, name)
