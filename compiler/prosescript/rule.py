"""The ProseScript lint rule: each ```prose fence parsed, then checked (names, calls, bounds)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic
from ..ir import Body, Contract, Fence
from .scope import PROSE_INFOS, contract_scope

if TYPE_CHECKING:  # the rule chain imports this package: no import back at run time
    from ..rules.context import RuleContext


def prose_fences(contract: Contract) -> list[Fence]:
    """Every ```prose / ```prosescript fence of a contract, wherever it sits, in file order."""
    bodies: list[Body] = [contract.preamble]
    for section in contract.sections:
        bodies.append(section.body)
        bodies.extend(facet.body for facet in section.facets)
    # an unclosed fence swallows the rest of the file; fence_unterminated reports it
    fences = [
        fence
        for body in bodies
        for fence in body.fences
        if fence.info in PROSE_INFOS and fence.closed
    ]
    return sorted(fences, key=lambda f: f.span.line)


def check(contract: Contract, context: RuleContext) -> Iterator[Diagnostic]:
    fences = prose_fences(contract)
    if not fences:
        return  # lark is imported only when there is ProseScript to read
    from .checks import check_structure
    from .names import check_names
    from .parse import parse_script

    scope = contract_scope(contract, context)
    for fence in fences:
        script, syntax = parse_script(fence, context.source.path)
        yield from syntax
        if script is None:
            continue
        yield from check_structure(script)
        yield from check_names(script, scope)
