"""Order and cycles of a subscription graph with the standard library's graphlib: the one
cycle check of the runtime and of the compiled-intent checker (Forme keeps networkx
for wiring). Edges are (producer, subscriber) pairs; ends that are not nodes are ignored
(the intent checker reports those on their own)."""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from graphlib import CycleError, TopologicalSorter

__all__ = ["CycleError", "find_cycle", "topological_order"]


def _sorter(nodes: Iterable[str], edges: Iterable[tuple[str, str]]) -> TopologicalSorter[str]:
    names = set(nodes)
    sorter: TopologicalSorter[str] = TopologicalSorter()
    for name in sorted(names):
        sorter.add(name)
    for producer, subscriber in sorted(set(edges)):
        if producer in names and subscriber in names:
            sorter.add(subscriber, producer)
    return sorter


def topological_order(nodes: Iterable[str], edges: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """Every node after all of its producers, ties broken by name (the smallest ready
    node first); raise CycleError when the graph has a cycle."""
    sorter = _sorter(nodes, edges)
    sorter.prepare()
    ready = list(sorter.get_ready())
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        name = heapq.heappop(ready)
        order.append(name)
        sorter.done(name)
        for child in sorter.get_ready():
            heapq.heappush(ready, child)
    return tuple(order)


def find_cycle(nodes: Iterable[str], edges: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """One cycle as a path in the direction the truth flows (each node feeds the next),
    starting and ending at its smallest name; () when the graph is acyclic."""
    try:
        _sorter(nodes, edges).prepare()
    except CycleError as exc:
        loop: list[str] = list(exc.args[1])[:-1]
        start = loop.index(min(loop))
        path = loop[start:] + loop[:start]
        return (*path, path[0])
    return ()
