"""The read-only context handed to every contract rule."""

from __future__ import annotations

from ..ir import Project, SourceFile
from ..values import value


@value(kw_only=True)
class RuleContext:
    """What a rule may look at beyond its contract: the whole project being checked."""

    project: Project
    source: SourceFile
