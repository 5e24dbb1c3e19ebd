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
class Invocation:
    """`call target`, `session "prompt"`, `session: agent`, `session label: agent`, `resume: agent`."""

    kind: InvocationKind
    target: Name | None  # call target, or the agent of session/resume
    target_is_string: bool  # `call "std/…"`
    prompt: StringLit | None  # `session "prompt"`
    label: Name | None  # `session label: agent`
    properties: tuple[Property, ...]
    span: Span


@dataclass(frozen=True, slots=True, kw_only=True)
class DoCall:
    """`do block-name(args)`."""

    block: Name
    args: tuple[Expr, ...] | None  # None when written without parentheses
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
    StringLit | Number | Constant | Ref | ArrayExpr | ObjectExpr | Invocation | DoCall | Pipeline
)


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
    target: Ref
    value: Value
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
    """An invocation or `do` used as a statement."""

    value: Invocation | DoCall | DoBlock
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


Value: TypeAlias = Expr | DoBlock | Parallel | Repeat | For | Loop

Stmt: TypeAlias = (
    Use
    | AgentDef
    | BlockDef
    | Let
    | Assign
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
