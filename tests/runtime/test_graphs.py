"""The one cycle check outside Forme (graphlib): a dependency order with ties broken by
name, and a named cycle path in the direction truth flows."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prosec.runtime.graphs import CycleError, find_cycle, topological_order

NAMES = [f"n{i}" for i in range(8)]


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[str], list[tuple[str, str]]]:
    nodes = draw(st.lists(st.sampled_from(NAMES), unique=True, min_size=1))
    pairs = st.tuples(st.sampled_from(nodes), st.sampled_from(nodes))
    return nodes, draw(st.lists(pairs, max_size=12))


def acyclic(nodes: list[str], edges: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Keep only the edges that run forward in the list order: a DAG."""
    rank = {name: i for i, name in enumerate(nodes)}
    return [(p, s) for p, s in edges if rank[p] < rank[s]]


@settings(max_examples=200, deadline=None)
@given(graphs())
def test_order_is_the_smallest_ready_node_first(
    graph: tuple[list[str], list[tuple[str, str]]],
) -> None:
    nodes, edges = graph[0], acyclic(*graph)
    order = topological_order(nodes, edges)
    assert sorted(order) == sorted(nodes)
    done: set[str] = set()
    for name in order:
        ready = [n for n in nodes if n not in done and all(p in done for p, s in edges if s == n)]
        assert name == min(ready)
        done.add(name)
    assert find_cycle(nodes, edges) == ()


@settings(max_examples=200, deadline=None)
@given(graphs())
def test_a_found_cycle_is_a_real_cycle(graph: tuple[list[str], list[tuple[str, str]]]) -> None:
    nodes, edges = graph
    cycle = find_cycle(nodes, edges)
    if not cycle:
        topological_order(nodes, edges)  # no cycle: an order exists
        return
    assert cycle[0] == cycle[-1] == min(cycle)
    assert all(pair in edges for pair in itertools.pairwise(cycle))
    with pytest.raises(CycleError):
        topological_order(nodes, edges)


def test_direction_and_unknown_ends() -> None:
    edges = [("b", "c"), ("c", "a"), ("a", "b"), ("a", "ghost")]
    assert find_cycle(["a", "b", "c"], edges) == ("a", "b", "c", "a")
    assert topological_order(["z", "y", "x"], [("z", "x"), ("ghost", "y")]) == ("y", "z", "x")
