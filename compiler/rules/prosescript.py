"""ProseScript static checks over ```prose fences (syntax, names, call targets, loop bounds)."""

from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics import Diagnostic
from ..ir import Contract
from .context import RuleContext


def check(contract: Contract, context: RuleContext) -> Iterator[Diagnostic]:
    # the Lark-based checks land with prosec.compiler.parse.prosescript
    yield from ()
