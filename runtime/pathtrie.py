"""Path matching for canonicalizer rules: a trie of dotted path patterns (`*` one key,
`**` any number of keys), walked as a small NFA with one state set per key. The state
sets are tuples of trie nodes, so each step is memoized."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .canonicalizer import Rule

__all__ = ["Node", "Trie", "closure", "matched", "step"]


class Node:
    __slots__ = ("children", "glob", "is_glob", "rules", "star")

    def __init__(self, *, is_glob: bool = False) -> None:
        self.children: dict[str, Node] = {}
        self.star: Node | None = None
        self.glob: Node | None = None
        self.is_glob = is_glob
        self.rules: list[Rule] = []


class Trie:
    __slots__ = ("root", "start")

    def __init__(self, root: Node) -> None:
        self.root = root
        self.start = closure((root,))

    @classmethod
    def build(cls, rules: Iterable[Rule]) -> Trie:
        root = Node()
        for rule in rules:
            node = root
            for part in rule.path:
                if part == "**":
                    if node.glob is None:
                        node.glob = Node(is_glob=True)
                    node = node.glob
                elif part == "*":
                    if node.star is None:
                        node.star = Node()
                    node = node.star
                else:
                    node = node.children.setdefault(part, Node())
            node.rules.append(rule)
        return cls(root)


@functools.lru_cache(maxsize=8192)
def closure_cached(states: tuple[Node, ...]) -> tuple[Node, ...]:
    return closure(states)


def closure(states: Iterable[Node]) -> tuple[Node, ...]:
    out: list[Node] = []
    stack = list(states)
    while stack:
        state = stack.pop()
        if state in out:
            continue
        out.append(state)
        if state.glob is not None:
            stack.append(state.glob)
    return tuple(out)


@functools.lru_cache(maxsize=65536)
def step(states: tuple[Node, ...], key: str) -> tuple[Node, ...]:
    nxt: list[Node] = []
    for state in states:
        child = state.children.get(key)
        if child is not None:
            nxt.append(child)
        if state.star is not None:
            nxt.append(state.star)
        if state.is_glob:
            nxt.append(state)
    return closure_cached(tuple(nxt)) if nxt else ()


@functools.lru_cache(maxsize=8192)
def matched(states: tuple[Node, ...]) -> list[Rule]:
    return [rule for state in states for rule in state.rules]
