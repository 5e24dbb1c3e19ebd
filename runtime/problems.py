"""The one problem value of every document check (compiled intent, JSON Schema): where,
as a JSON path such as `$.topology.edges[2].producer`, and what; frozen, ordered and
compared by value, like jsonschema's errors."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Problem"]


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    """One violation: where (a JSON path) and what."""

    path: str
    message: str
    # the same place as keys and indexes, for editors that point at a line; not compared
    location: tuple[str | int, ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"
