"""Guarded YAML: compose with the safe loader, refuse deep or alias-expanded documents,
then construct.

A few hundred bytes of YAML can nest thousands of levels (every later step recurses) or
expand, through aliases, into billions of values; both are refused before any value is
built. The compiler's frontmatter parser and the runtime's truth reader share this guard.
This module and `truth.py` are the runtime's only users of PyYAML.
"""

from __future__ import annotations

from typing import Any

import yaml

from .canonical import MAX_DEPTH

__all__ = ["MAX_DEPTH", "MAX_NODES", "YamlRefused", "load_guarded", "loader_class", "too_large"]

MAX_NODES = 100_000  # values reached, aliases expanded: a few bytes must not become gigabytes


class YamlRefused(ValueError):
    """A YAML document refused before construction (too deep, or too many values)."""


def too_large(root: Any) -> str | None:
    """Why a composed YAML node graph is refused (too deep, or too many values once its
    aliases are expanded), else None; iterative, so the check itself cannot overflow."""
    stack = [(root, 1)]
    visited = 0
    while stack:
        node, depth = stack.pop()
        visited += 1
        if visited > MAX_NODES:
            return f"YAML with more than {MAX_NODES:,} values (aliases expanded)"
        if not isinstance(node.value, list):  # a scalar
            continue
        if depth > MAX_DEPTH:
            return f"YAML nested deeper than {MAX_DEPTH} levels"
        for child in node.value:
            if isinstance(child, tuple):  # a mapping's (key, value) pair
                stack.extend((part, depth + 1) for part in child)
            else:
                stack.append((child, depth + 1))
    return None


def loader_class() -> Any:
    """The safe loader: the C one is several times faster; the Python one when libyaml
    is absent."""
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_guarded(text: str) -> Any:
    """Load one YAML document safely. Raises YamlRefused for a document too deep or too
    large, yaml.YAMLError for a syntax error, ValueError for a value no type can hold
    (an integer of 5,000 digits)."""
    loader = loader_class()(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:  # the pure-Python composer recurses per level
            raise YamlRefused(f"YAML nested deeper than {MAX_DEPTH} levels") from None
        if node is None:
            return None
        refused = too_large(node)
        if refused is not None:
            raise YamlRefused(refused)
        return loader.construct_document(node)
    finally:
        loader.dispose()
