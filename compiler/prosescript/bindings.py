"""ProseScript lexical scopes: how each name was bound, and lookup through enclosing scopes."""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

from ..ir import Span
from .scope import key


class Kind(StrEnum):
    """How a name was bound; decides whether it may be reassigned."""

    LET = "let"
    CONST = "const"
    LOOP = "loop variable"
    CATCH = "catch variable"
    PARAM = "block parameter"
    PIPE = "pipeline variable"
    INPUT = "input"
    AGENT = "agent"
    BLOCK = "block"
    ALIAS = "`use` alias"


IMMUTABLE = frozenset({Kind.CONST, Kind.LOOP, Kind.CATCH, Kind.PARAM, Kind.PIPE})


class Binding(NamedTuple):
    name: str
    kind: Kind
    span: Span | None


class Scope:
    """One lexical scope of the walk (plain class: walker state, not IR)."""

    __slots__ = ("block_body", "names", "parent", "script_level")

    def __init__(
        self, parent: Scope | None, *, script_level: bool = True, block_body: bool = False
    ) -> None:
        self.parent = parent
        self.names: dict[str, Binding] = {}
        self.script_level = script_level  # False only for the contract's own inputs
        self.block_body = block_body  # a `block` body: its locals are its own, not shadows

    def lookup(self, name: str) -> Binding | None:
        scope: Scope | None = self
        while scope is not None:
            found = scope.names.get(key(name))
            if found is not None:
                return found
            scope = scope.parent
        return None

    def lookup_script(self, name: str) -> Binding | None:
        """A binding made by the script itself (not a declared contract input)."""
        scope: Scope | None = self
        while scope is not None and scope.script_level:
            found = scope.names.get(key(name))
            if found is not None or scope.block_body:
                return found
            scope = scope.parent
        return None

    def visible(self) -> list[str]:
        names: list[str] = []
        scope: Scope | None = self
        while scope is not None:
            names.extend(b.name for b in scope.names.values())
            scope = scope.parent
        return names
