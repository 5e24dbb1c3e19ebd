"""ProseScript static checks over ```prose fences (syntax, names, call targets, loop bounds)."""

from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics import Diagnostic
from ..ir import Body, Contract, Fence
from .context import RuleContext
from .script_scope import PROSE_INFOS, contract_scope


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
    from ..parse.prosescript import parse_script
    from .script_checks import check_structure
    from .script_names import check_names

    scope = contract_scope(contract, context)
    for fence in fences:
        script, syntax = parse_script(fence, context.source.path)
        yield from syntax
        if script is None:
            continue
        yield from check_structure(script)
        yield from check_names(script, scope)
