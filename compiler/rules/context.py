"""The read-only context handed to every contract rule."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Project, SourceFile


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleContext:
    """What a rule may look at beyond its contract: the whole project being checked."""

    project: Project
    source: SourceFile
