"""ProseScript validation rows that need no scope: bounds, counts, modifiers, duplicates."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from enum import StrEnum

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from .ir import (
    AgentDef,
    Apply,
    Arg,
    BlockDef,
    Break,
    Choice,
    Constant,
    Continue,
    DoCall,
    Expr,
    For,
    Index,
    Invocation,
    InvocationKind,
    LegacyIO,
    Loop,
    LoopKind,
    Member,
    Modifier,
    Name,
    Number,
    Parallel,
    PipeOp,
    Property,
    Ref,
    Repeat,
    Script,
    StringLit,
    Try,
    Use,
)
from .node import Node, fields
from .scope import key

# ProseScript's identifier (prosescript.md): what a `use` alias must be
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")

JOIN_STRATEGIES = ("all", "first", "any")
FAILURE_POLICIES = ("fail-fast", "continue", "ignore")
BACKOFF_STRATEGIES = ("none", "linear", "exponential")
_MODIFIER_KEYS = ("count", "on-fail")


def nodes(value: object) -> Iterator[object]:
    """Every statement and expression under `value`, depth first, in source order."""
    if isinstance(value, tuple):
        for item in value:
            yield from nodes(item)
        return
    if not isinstance(value, Node) or isinstance(value, Name):
        return
    yield value
    for name in _child_fields(type(value)):
        yield from nodes(getattr(value, name))


@functools.cache
def _child_fields(cls: type[Node]) -> tuple[str, ...]:
    """The fields of an IR class that may hold nodes (spans and plain values cannot)."""
    return tuple(f for f in fields(cls) if f != "span" and not f.endswith("_span"))


def check_structure(script: Script) -> list[Diagnostic]:
    """The deterministic, scope-free validation rows of `prosescript.md`."""
    found: list[Diagnostic] = []
    found += _declarations(script)
    loop_control = False
    blocks = {key(s.name.text): s for s in script.statements if isinstance(s, BlockDef)}
    agents = {key(s.name.text): s for s in script.statements if isinstance(s, AgentDef)}
    for node in nodes(script.statements):
        if isinstance(node, Loop):
            found += _loop(node)
        elif isinstance(node, Repeat):
            found += _count(node.count, "`repeat` count")
        elif isinstance(node, Parallel | For):
            found += _modifiers(node)
        elif isinstance(node, Try) and node.catch is None and node.finally_body is None:
            found.append(
                diag.make(
                    "prosescript_try_without_handler",
                    "`try` needs a `catch` or a `finally`; without one it handles nothing",
                    node.head_span,
                )
            )
        elif isinstance(node, Choice):
            found += _options(node)
        elif isinstance(node, LegacyIO):
            found.append(_legacy(node))
        elif isinstance(node, StringLit):
            found += _escapes(node)
        elif isinstance(node, Invocation):
            found += _invocation(node, agents)
        elif isinstance(node, AgentDef):
            found += _duplicate_properties(node.properties)
        elif isinstance(node, DoCall) and key(node.block.text) in blocks:
            found += _arity(node, blocks[key(node.block.text)])
        elif isinstance(node, Apply):
            found += _duplicate_args(node.args)
        elif isinstance(node, Break | Continue):
            loop_control = True
    if loop_control:  # where each stands takes a second walk, rarely needed
        found += _loop_control(script.statements, _Flow.OUTSIDE)
    return found


class _Flow(StrEnum):
    """Where a `break` / `continue` stands, for the innermost enclosing construct."""

    OUTSIDE = "outside"  # no loop encloses it (or a `block` body starts afresh)
    LOOP = "loop"  # a sequential `for`, `repeat` or `loop`
    PARALLEL_LOOP = "parallel loop"  # a `parallel for` / `parallel repeat` iteration
    BRANCH = "branch"  # a `parallel:` branch or a pipeline body inside a loop


def _loop_control(value: object, flow: _Flow) -> Iterator[Diagnostic]:
    """`break` leaves the innermost sequential loop; `continue` ends an iteration of any
    loop; neither crosses a `parallel:` branch or a pipeline body, which run apart."""
    if isinstance(value, tuple):
        for item in value:
            yield from _loop_control(item, flow)
        return
    if isinstance(value, Break | Continue):
        word = "break" if isinstance(value, Break) else "continue"
        problem = {
            _Flow.OUTSIDE: f"`{word}` is outside any `for`, `repeat` or `loop`",
            _Flow.BRANCH: f"`{word}` cannot leave a `parallel:` branch or a pipeline body",
            _Flow.PARALLEL_LOOP: "`break` cannot stop a `parallel for` or `parallel repeat`, "
            'whose iterations run at once; use `parallel ("first")` or filter the results',
            _Flow.LOOP: "",
        }[flow]
        if problem and not (flow is _Flow.PARALLEL_LOOP and word == "continue"):
            yield diag.make("prosescript_loop_control_misplaced", problem, value.span)
        return
    if not isinstance(value, Node) or isinstance(value, Name):
        return
    if isinstance(value, For | Repeat):
        flow = _Flow.PARALLEL_LOOP if value.parallel else _Flow.LOOP
    elif isinstance(value, Loop):
        flow = _Flow.LOOP
    elif isinstance(value, BlockDef):
        flow = _Flow.OUTSIDE
    elif isinstance(value, Parallel | PipeOp) and flow is not _Flow.OUTSIDE:
        flow = _Flow.BRANCH
    for name in _child_fields(type(value)):
        yield from _loop_control(getattr(value, name), flow)


def _declarations(script: Script) -> Iterator[Diagnostic]:
    """`use` before executable statements; agents, blocks and aliases share one namespace."""
    seen: dict[str, tuple[Name, bool]] = {}  # name → where first defined, whether an alias
    executable = False
    for stmt in script.statements:
        alias = isinstance(stmt, Use)
        if isinstance(stmt, Use):
            yield from _use(stmt, executable)
            names = [stmt.alias] if stmt.alias is not None else []
        elif isinstance(stmt, AgentDef | BlockDef):
            names = [stmt.name]
        else:
            executable = True
            continue
        for name in names:
            first, first_alias = seen.setdefault(key(name.text), (name, alias))
            if first is not name:
                yield _clash(name, first, alias, first_alias)


def _use(stmt: Use, executable: bool) -> Iterator[Diagnostic]:
    if executable:
        yield diag.make(
            "prosescript_use_after_statement",
            "`use` must come before the script's first executable statement",
            stmt.span,
        )
    if not stmt.source.value.strip():
        yield diag.make(
            "prosescript_use_empty",
            '`use ""` names no dependency: write `host/owner/repo/path`, `std/…` or a '
            "path relative to this file",
            stmt.source.span,
        )
    if stmt.alias is not None and not _IDENTIFIER.fullmatch(stmt.alias.text):
        yield diag.make(
            "prosescript_use_alias_invalid",
            f"`{stmt.alias.text}` is not an identifier: an alias starts with a letter or `_` "
            "and goes on with letters, digits, `_` or `-`",
            stmt.alias.span,
        )


def _clash(name: Name, first: Name, alias: bool, first_alias: bool) -> Diagnostic:
    where = f"line {first.span.line}"
    if alias and first_alias:
        return diag.make(
            "prosescript_use_alias_duplicate",
            f"the alias `{name.text}` is already given to the `use` on {where}",
            name.span,
        )
    if alias or first_alias:
        return diag.make(
            "prosescript_use_alias_collision",
            f"`{name.text}` is both a `use` alias and a block or agent (on {where}); "
            "rename one of them",
            name.span,
        )
    return diag.make(
        "prosescript_duplicate_definition",
        f"`{name.text}` is already defined on {where}; agents, blocks and `use` aliases "
        "need distinct names",
        name.span,
    )


def _loop(loop: Loop) -> Iterator[Diagnostic]:
    if loop.max is not None:
        yield from _count(loop.max, "loop `max`")
    elif loop.kind is LoopKind.FOR_EACH:
        yield diag.make(
            "prosescript_unbounded_for_each",
            "`loop for each` over a model-produced collection needs a bound: add `(max: N)`",
            loop.head_span,
        )
    else:
        yield diag.make(
            "prosescript_unbounded_loop",
            "this `loop` has no bound and may never end; add `(max: N)` before the `:`",
            loop.head_span,
        )


def _count(expr: Expr, what: str) -> Iterator[Diagnostic]:
    """A literal count must be a positive integer; a reference is checked at run time."""
    if isinstance(expr, Number) and isinstance(expr.value, int) and expr.value >= 1:
        return
    if isinstance(expr, Ref | Invocation | DoCall | Apply | Index | Member):
        return
    shown = expr.raw if isinstance(expr, Number | StringLit) else _literal(expr)
    yield diag.make(
        "prosescript_count_invalid",
        f"{what} must be a positive integer, not {shown}",
        expr.span,
    )


def _literal(expr: Expr) -> str:
    if isinstance(expr, Constant):
        return "null" if expr.value is None else str(expr.value).lower()
    return "this value"


def _modifiers(block: Parallel | For) -> Iterator[Diagnostic]:
    strategies: list[Modifier] = []
    count: Modifier | None = None
    for modifier in block.modifiers:
        if modifier.key is None:
            value = modifier.value
            if not isinstance(value, StringLit) or value.value not in JOIN_STRATEGIES:
                yield _bad_modifier(
                    modifier, 'a join strategy is one of `"all"`, `"first"`, `"any"`'
                )
            strategies.append(modifier)
        elif modifier.key.text == "count":
            count = modifier
            yield from _count(modifier.value, "`count`")
        elif modifier.key.text == "on-fail":
            value = modifier.value
            if not isinstance(value, StringLit) or value.value not in FAILURE_POLICIES:
                yield _bad_modifier(
                    modifier, 'on-fail is one of `"fail-fast"`, `"continue"`, `"ignore"`'
                )
        else:
            yield _bad_modifier(
                modifier, "the modifiers are a join strategy, `count:` and `on-fail:`"
            )
    if len(strategies) > 1:
        yield _bad_modifier(strategies[1], "give one join strategy")
    if count is None:
        return
    flags = [m.value.value for m in strategies if isinstance(m.value, StringLit)]
    if "any" not in flags:
        yield diag.make(
            "prosescript_count_without_any",
            '`count` only applies to the `"any"` join strategy; add `"any"` or drop `count`',
            count.span,
        )
    value = count.value
    branches = len(block.body)
    if isinstance(block, Parallel) and isinstance(value, Number) and value.value > branches:
        yield diag.make(
            "prosescript_count_invalid",
            f"`count: {value.raw}` asks for more successes than the block's {branches} branches",
            value.span,
        )


def _bad_modifier(modifier: Modifier, expected: str) -> Diagnostic:
    return diag.make(
        "prosescript_parallel_modifier_invalid",
        f"invalid parallel modifier: {expected}",
        modifier.span,
    )


def _options(choice: Choice) -> Iterator[Diagnostic]:
    seen: dict[str, StringLit] = {}
    for option in choice.options:
        first = seen.setdefault(option.label.value, option.label)
        if first is not option.label:
            yield diag.make(
                "prosescript_duplicate_option",
                f'option "{option.label.value}" is already offered on line {first.span.line}',
                option.label.span,
            )


def _legacy(node: LegacyIO) -> Diagnostic:
    section = "`### Requires` / `### Parameters`"
    if node.direction.value == "output":
        section = "`### Maintains` / `### Returns`"
    return diag.make(
        "prosescript_legacy_io",
        f"`{node.direction.value} {node.name.text}` is a legacy standalone-script declaration; "
        f"declare `{node.name.text}` in {section} (see `prose upgrade --dry-run`)",
        node.span,
    )


def _escapes(string: StringLit) -> Iterator[Diagnostic]:
    for escape, span in string.bad_escapes:
        yield diag.make(
            "prosescript_bad_escape",
            f'unknown escape `{escape}`; strings know `\\\\`, `\\"`, `\\n`, `\\t`, `\\{{` and `\\}}`',
            span,
        )


def _invocation(call: Invocation, agents: dict[str, AgentDef]) -> Iterator[Diagnostic]:
    yield from _duplicate_args(call.args or ())
    yield from _duplicate_properties(call.properties)
    props = {p.key.text: p for p in call.properties}
    retry, backoff = props.get("retry"), props.get("backoff")
    if retry is not None and retry.value is not None:
        yield from _count(retry.value, "`retry`")
    if backoff is not None and backoff.value is not None:
        value = backoff.value
        word = (
            value.value if isinstance(value, StringLit) else ".".join(getattr(value, "parts", ()))
        )
        if word not in BACKOFF_STRATEGIES:
            yield diag.make(
                "prosescript_backoff_invalid",
                f"unknown backoff `{word or 'value'}`; use `none`, `linear` or `exponential`",
                value.span,
            )
        if retry is None:
            yield diag.make(
                "prosescript_backoff_without_retry",
                "`backoff` has no effect without `retry: N`",
                backoff.span,
            )
    if call.kind is InvocationKind.RESUME and call.target is not None:
        agent = agents.get(key(call.target.text))
        if agent is not None and not _persistent(agent):
            yield diag.make(
                "prosescript_resume_not_persistent",
                f"`resume: {call.target.text}` needs a persistent agent; give agent "
                f"`{agent.name.text}` a `persist:` setting",
                call.target.span,
            )


def _persistent(agent: AgentDef) -> bool:
    for prop in agent.properties:
        if prop.key.text == "persist":
            return not (isinstance(prop.value, Constant) and prop.value.value in (False, None))
    return False


def _duplicate_properties(props: Iterable[Property]) -> Iterator[Diagnostic]:
    seen: dict[str, Property] = {}
    for prop in props:
        first = seen.setdefault(prop.key.text, prop)
        if first is not prop:
            yield diag.make(
                "prosescript_duplicate_property",
                f"`{prop.key.text}` is already given on line {first.span.line}",
                prop.key.span,
            )
        yield from _duplicate_properties(prop.children)


def _duplicate_args(args: Iterable[Arg]) -> Iterator[Diagnostic]:
    seen: dict[str, Name] = {}
    for arg in args:
        if arg.name is None:
            continue
        first = seen.setdefault(key(arg.name.text), arg.name)
        if first is not arg.name:
            yield diag.make(
                "prosescript_duplicate_property",
                f"`{arg.name.text}` is already given on line {first.span.line}",
                arg.name.span,
            )


def _arity(call: DoCall, block: BlockDef) -> Iterator[Diagnostic]:
    """Positional arguments fill the parameters in order; named ones then name the rest."""
    args = call.args or ()
    params = [key(p.text) for p in block.params]
    positional = 0
    named = False
    for arg in args:
        if arg.name is None:
            if named:
                yield _block_arity(block, "a positional argument cannot follow a named one", arg)
                return
            positional += 1
            continue
        named = True
        name = key(arg.name.text)
        if name not in params:
            problem = f"has no parameter `{arg.name.text}`"
        elif name in params[:positional]:
            problem = f"already receives `{arg.name.text}` by position"
        else:
            continue
        yield _block_arity(block, problem, arg)
        return
    given, wanted = len(args), len(params)
    if given != wanted:
        yield diag.make(
            "prosescript_block_arity",
            f"block `{block.name.text}` takes {wanted} argument{'s' if wanted != 1 else ''}, "
            f"this call passes {given}",
            call.span,
        )


def _block_arity(block: BlockDef, problem: str, arg: Arg) -> Diagnostic:
    if not problem.startswith("a positional"):
        problem = f"block `{block.name.text}` {problem}"
    return diag.make("prosescript_block_arity", problem, arg.span)
