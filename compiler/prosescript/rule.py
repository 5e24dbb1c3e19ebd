"""The ProseScript lint rule: each ```prose fence parsed, then checked (names, calls, bounds)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic
from ..ir import Body, Contract, Fence
from .scope import PROSE_INFOS, contract_scope

if TYPE_CHECKING:  # the rule chain imports this package: no import back at run time
    from ..rules.context import RuleContext
    from .ir import Script


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


@functools.lru_cache(maxsize=512)
def _parsed(fence: Fence, path: str) -> tuple[Script | None, tuple[Diagnostic, ...]]:
    """`parse_script` and the structure checks (a function of the script alone),
    remembered: a fence is a value (its text and where it sits), so a file parsed again
    (the language server, at each keystroke) parses only the fences that changed or moved."""
    from .checks import check_structure
    from .parse import parse_script

    script, syntax = parse_script(fence, path)
    if script is None:
        return None, tuple(syntax)
    return script, (*syntax, *check_structure(script))


def check(contract: Contract, context: RuleContext) -> Iterator[Diagnostic]:
    fences = prose_fences(contract)
    if not fences:
        return  # lark is imported only when there is ProseScript to read
    from .names import check_names

    scope = contract_scope(contract, context)
    for fence in fences:
        script, found = _parsed(fence, context.source.path)
        yield from found
        if script is not None:
            yield from check_names(script, scope)
