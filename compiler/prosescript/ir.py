"""Typed ProseScript statements and expressions: frozen, slotted, keyword-only, with file spans."""

from __future__ import annotations

from enum import StrEnum
from typing import TypeAlias

from ..ir import Span
from .node import Node


class Name(Node):
    """An identifier as written (`quality-bar`, `task_brief`) and where."""

    text: str
    span: Span


# -- expressions ------------------------------------------------------------------------------


class Interpolation(Node):
    """A `{name}` / `{object.property}` inside a string."""

    parts: tuple[str, ...]
    span: Span


class StringLit(Node):
    """A string literal: `value` is the decoded text (escapes applied)."""

    value: str
    raw: str  # as written, quotes included
    triple: bool
    interpolations: tuple[Interpolation, ...]
    bad_escapes: tuple[tuple[str, Span], ...]  # unknown `\x` escapes, as written
    span: Span


class Number(Node):
    value: int | float
    raw: str
    span: Span


class Constant(Node):
    """`true`, `false` or `null`."""

    value: bool | None
    span: Span


class Ref(Node):
    """A reference: a variable and optional property accesses (`review.score`)."""

    parts: tuple[str, ...]
    span: Span
    head_span: Span  # the first name only

    @property
    def head(self) -> str:
        return self.parts[0]


class ArrayExpr(Node):
    items: tuple[Expr, ...]
    span: Span


class Entry(Node):
    """An object entry; shorthand `{ a }` has `value` = a Ref to `a`."""

    key: Name
    value: Expr
    shorthand: bool
    span: Span


class ObjectExpr(Node):
    entries: tuple[Entry, ...]
    span: Span


class InvocationKind(StrEnum):
    CALL = "call"
    SESSION = "session"
    RESUME = "resume"


class Property(Node):
    """One `name: value` line of a property block; `shape:` nests `children`."""

    key: Name
    value: Expr | None
    children: tuple[Property, ...]
    span: Span


class Arg(Node):
    """One argument of a call: positional (`name` is None) or named (`name: value`)."""

    name: Name | None
    value: Expr
    span: Span


class Invocation(Node):
    """`call target`, `session "prompt"`, `session: agent`, `session label: agent`,
    `session task(args)`, `resume: agent`."""

    kind: InvocationKind
    target: Name | None  # call target, or the agent of session/resume
    target_is_string: bool  # `call "std/…"`
    prompt: StringLit | None  # `session "prompt"`
    label: Name | None  # `session label: agent`, or the task of `session task(args)`
    args: tuple[Arg, ...] | None  # `call f(a, b)`, `session task(a)`; None without parentheses
    inputs: Expr | None  # `call f with {…}`: an object of inputs, beside the property lines
    properties: tuple[Property, ...]
    span: Span


class DoCall(Node):
    """`do block-name(args)`."""

    block: Name
    args: tuple[Arg, ...] | None  # None when written without parentheses
    span: Span


class Apply(Node):
    """`name(args)`: a builtin, a function called by name or an operation left to the render
    (the checks decide which); a builtin statement may drop the parentheses around its one
    argument (`write_world_model value`, `parenthesized` False)."""

    function: Name
    args: tuple[Arg, ...]
    parenthesized: bool
    span: Span


class Index(Node):
    """`target[key]`: an item of a list (by position from 0) or of an object (by key)."""

    target: Expr
    key: Expr
    span: Span


class Member(Node):
    """`target.name` after an item or a call (`xs[0].title`); `a.b` alone is a `Ref`."""

    target: Expr
    name: Name
    span: Span


class DoBlock(Node):
    """An anonymous `do:` block."""

    body: tuple[Stmt, ...]
    span: Span


class PipeKind(StrEnum):
    MAP = "map"
    FILTER = "filter"
    PMAP = "pmap"
    REDUCE = "reduce"


class PipeOp(Node):
    """`| map:` … or `| reduce(acc, item):` …; map/filter/pmap bind `item` implicitly."""

    kind: PipeKind
    names: tuple[Name, ...]  # reduce's accumulator and item names
    body: tuple[Stmt, ...]
    span: Span


class Pipeline(Node):
    source: Expr
    ops: tuple[PipeOp, ...]
    span: Span


Expr: TypeAlias = (
    StringLit
    | Number
    | Constant
    | Ref
    | ArrayExpr
    | ObjectExpr
    | Invocation
    | DoCall
    | Pipeline
    | Apply
    | Index
    | Member
)
# what an assignment, `append` or `record` writes: a name, a property or an item of it
Place: TypeAlias = Ref | Index | Member


# -- statements -------------------------------------------------------------------------------


class DiscretionStyle(StrEnum):
    BARE = "bare"
    BOLD = "bold"  # **…**
    TRIPLE = "triple"  # ***…***, may span lines


class Discretion(Node):
    """Natural-language condition text (markers removed, whitespace collapsed)."""

    text: str
    style: DiscretionStyle
    span: Span


class Use(Node):
    source: StringLit
    alias: Name | None
    span: Span


class AgentDef(Node):
    name: Name
    properties: tuple[Property, ...]
    span: Span


class BlockDef(Node):
    name: Name
    params: tuple[Name, ...]
    body: tuple[Stmt, ...]
    span: Span


class Let(Node):
    """`let`/`const` binding; `destructured` for `let { a, b } = …`."""

    const: bool
    names: tuple[Name, ...]
    destructured: bool
    value: Value
    span: Span


class Assign(Node):
    target: Place
    value: Value
    span: Span


class Append(Node):
    """`append item to target`, `append target item` or `record item in target`: the list
    held at `target` gains `item` at its end."""

    item: Expr
    target: Place
    span: Span


class Break(Node):
    """`break`: leave the innermost `for`, `repeat` or `loop`."""

    span: Span


class Continue(Node):
    """`continue`: end this iteration of the innermost `for`, `repeat` or `loop`."""

    span: Span


class Return(Node):
    value: Value | None
    span: Span


class Throw(Node):
    value: Value | None  # None re-raises the active error
    span: Span


class ExprStmt(Node):
    """An invocation, `do` or `name(args)` used as a statement."""

    value: Invocation | DoCall | DoBlock | Apply
    span: Span


class Modifier(Node):
    """A parallel modifier: a flag string (`"any"`) or a `key: value` pair (`count: 2`)."""

    key: Name | None
    value: Expr
    span: Span


class Parallel(Node):
    modifiers: tuple[Modifier, ...]
    body: tuple[Stmt, ...]
    span: Span


class Repeat(Node):
    count: Expr
    alias: Name | None
    parallel: bool
    body: tuple[Stmt, ...]
    span: Span


class For(Node):
    names: tuple[Name, ...]  # item[, index]
    iterable: Expr
    parallel: bool
    modifiers: tuple[Modifier, ...]
    body: tuple[Stmt, ...]
    span: Span


class LoopKind(StrEnum):
    OPEN = "open"
    UNTIL = "until"
    WHILE = "while"
    FOR_EACH = "for-each"


class Loop(Node):
    kind: LoopKind
    condition: Discretion | None
    item: Name | None  # `loop for each item in …`
    iterable: Expr | None
    max: Expr | None
    alias: Name | None  # `as page`
    body: tuple[Stmt, ...]
    span: Span
    head_span: Span  # the `loop …:` line, for diagnostics about the header


class Filter(Node):
    """`filter source where condition`: the items of `source` for which the condition
    (discretion text, with `item` naming each) holds, in their order."""

    source: Expr
    condition: Discretion
    span: Span


class Branch(Node):
    """An `if`/`elif` branch (with a condition) or the `else` branch (condition None)."""

    condition: Discretion | None
    body: tuple[Stmt, ...]
    span: Span


class If(Node):
    branches: tuple[Branch, ...]
    span: Span


class Option(Node):
    label: StringLit
    body: tuple[Stmt, ...]
    span: Span


class Choice(Node):
    criteria: Discretion
    options: tuple[Option, ...]
    span: Span


class Catch(Node):
    name: Name | None
    body: tuple[Stmt, ...]
    span: Span


class Try(Node):
    body: tuple[Stmt, ...]
    catch: Catch | None
    finally_body: tuple[Stmt, ...] | None
    span: Span
    head_span: Span


class LegacyDirection(StrEnum):
    INPUT = "input"
    OUTPUT = "output"


class LegacyIO(Node):
    """A standalone-`.prose` `input name: …` / `output name = …` declaration."""

    direction: LegacyDirection
    name: Name
    value: Value | None
    span: Span


Value: TypeAlias = Expr | DoBlock | Parallel | Repeat | For | Loop | Filter

Stmt: TypeAlias = (
    Use
    | AgentDef
    | BlockDef
    | Let
    | Assign
    | Append
    | Break
    | Continue
    | Return
    | Throw
    | ExprStmt
    | DoBlock
    | Parallel
    | Repeat
    | For
    | Loop
    | If
    | Choice
    | Try
    | LegacyIO
)


class Script(Node):
    """One parsed ```prose fence."""

    statements: tuple[Stmt, ...]
    span: Span  # the fence content
