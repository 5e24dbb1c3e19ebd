"""Typed ProseScript statements and expressions: frozen, slotted, keyword-only, with file spans."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TypeAlias

from ..ir import Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Name:
    """An identifier as written (`quality-bar`, `task_brief`) and where."""

    text: str
    span: Span


# -- expressions ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Interpolation:
    """A `{name}` / `{object.property}` inside a string."""

    parts: tuple[str, ...]
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class StringLit:
    """A string literal: `value` is the decoded text (escapes applied)."""

    value: str
    raw: str  # as written, quotes included
    triple: bool
    interpolations: tuple[Interpolation, ...]
    bad_escapes: tuple[tuple[str, Span], ...]  # unknown `\x` escapes, as written
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Number:
    value: int | float
    raw: str
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Constant:
    """`true`, `false` or `null`."""

    value: bool | None
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Ref:
    """A reference: a variable and optional property accesses (`review.score`)."""

    parts: tuple[str, ...]
    span: Span
    head_span: Span  # the first name only

    @property
    def head(self) -> str:
        return self.parts[0]


@dataclass(frozen=True, slots=True, kw_only=True)
class ArrayExpr:
    items: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """An object entry; shorthand `{ a }` has `value` = a Ref to `a`."""

    key: Name
    value: Expr
    shorthand: bool
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectExpr:
    entries: tuple[Entry, ...]
    span: Span


class InvocationKind(StrEnum):
    CALL = "call"
    SESSION = "session"
    RESUME = "resume"


@dataclass(frozen=True, slots=True, kw_only=True)
class Property:
    """One `name: value` line of a property block; `shape:` nests `children`."""

    key: Name
    value: Expr | None
    children: tuple[Property, ...]
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Arg:
    """One argument of a call: positional (`name` is None) or named (`name: value`)."""

    name: Name | None
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Invocation:
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


@dataclass(frozen=True, slots=True, kw_only=True)
class DoCall:
    """`do block-name(args)`."""

    block: Name
    args: tuple[Arg, ...] | None  # None when written without parentheses
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Apply:
    """`name(args)`: a builtin, a function called by name or an operation left to the render
    (the checks decide which); a builtin statement may drop the parentheses around its one
    argument (`write_world_model value`, `parenthesized` False)."""

    function: Name
    args: tuple[Arg, ...]
    parenthesized: bool
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Index:
    """`target[key]`: an item of a list (by position from 0) or of an object (by key)."""

    target: Expr
    key: Expr
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Member:
    """`target.name` after an item or a call (`xs[0].title`); `a.b` alone is a `Ref`."""

    target: Expr
    name: Name
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class DoBlock:
    """An anonymous `do:` block."""

    body: tuple[Stmt, ...]
    span: Span


class PipeKind(StrEnum):
    MAP = "map"
    FILTER = "filter"
    PMAP = "pmap"
    REDUCE = "reduce"


@dataclass(frozen=True, slots=True, kw_only=True)
class PipeOp:
    """`| map:` … or `| reduce(acc, item):` …; map/filter/pmap bind `item` implicitly."""

    kind: PipeKind
    names: tuple[Name, ...]  # reduce's accumulator and item names
    body: tuple[Stmt, ...]
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Pipeline:
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


@dataclass(frozen=True, slots=True, kw_only=True)
class Discretion:
    """Natural-language condition text (markers removed, whitespace collapsed)."""

    text: str
    style: DiscretionStyle
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Use:
    source: StringLit
    alias: Name | None
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentDef:
    name: Name
    properties: tuple[Property, ...]
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockDef:
    name: Name
    params: tuple[Name, ...]
    body: tuple[Stmt, ...]
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Let:
    """`let`/`const` binding; `destructured` for `let { a, b } = …`."""

    const: bool
    names: tuple[Name, ...]
    destructured: bool
    value: Value
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Assign:
    target: Place
    value: Value
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Append:
    """`append item to target`, `append target item` or `record item in target`: the list
    held at `target` gains `item` at its end."""

    item: Expr
    target: Place
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Break:
    """`break`: leave the innermost `for`, `repeat` or `loop`."""

    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Continue:
    """`continue`: end this iteration of the innermost `for`, `repeat` or `loop`."""

    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Return:
    value: Value | None
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Throw:
    value: Value | None  # None re-raises the active error
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class ExprStmt:
    """An invocation, `do` or `name(args)` used as a statement."""

    value: Invocation | DoCall | DoBlock | Apply
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Modifier:
    """A parallel modifier: a flag string (`"any"`) or a `key: value` pair (`count: 2`)."""

    key: Name | None
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Parallel:
    modifiers: tuple[Modifier, ...]
    body: tuple[Stmt, ...]
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Repeat:
    count: Expr
    alias: Name | None
    parallel: bool
    body: tuple[Stmt, ...]
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class For:
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


@dataclass(frozen=True, slots=True, kw_only=True)
class Loop:
    kind: LoopKind
    condition: Discretion | None
    item: Name | None  # `loop for each item in …`
    iterable: Expr | None
    max: Expr | None
    alias: Name | None  # `as page`
    body: tuple[Stmt, ...]
    span: Span
    head_span: Span  # the `loop …:` line, for diagnostics about the header


@dataclass(frozen=True, slots=True, kw_only=True)
class Filter:
    """`filter source where condition`: the items of `source` for which the condition
    (discretion text, with `item` naming each) holds, in their order."""

    source: Expr
    condition: Discretion
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Branch:
    """An `if`/`elif` branch (with a condition) or the `else` branch (condition None)."""

    condition: Discretion | None
    body: tuple[Stmt, ...]
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class If:
    branches: tuple[Branch, ...]
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Option:
    label: StringLit
    body: tuple[Stmt, ...]
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Choice:
    criteria: Discretion
    options: tuple[Option, ...]
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Catch:
    name: Name | None
    body: tuple[Stmt, ...]
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class Try:
    body: tuple[Stmt, ...]
    catch: Catch | None
    finally_body: tuple[Stmt, ...] | None
    span: Span
    head_span: Span


class LegacyDirection(StrEnum):
    INPUT = "input"
    OUTPUT = "output"


@dataclass(frozen=True, slots=True, kw_only=True)
class LegacyIO:
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


@dataclass(frozen=True, slots=True, kw_only=True)
class Script:
    """One parsed ```prose fence."""

    statements: tuple[Stmt, ...]
    span: Span  # the fence content
