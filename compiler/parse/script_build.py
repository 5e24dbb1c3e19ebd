"""ProseScript parse trees → typed statements (duck-typed: lark itself stays in prosescript.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..ir import Span
from ..script_ir import (
    AgentDef,
    ArrayExpr,
    Assign,
    BlockDef,
    Branch,
    Catch,
    Choice,
    Constant,
    Discretion,
    DiscretionStyle,
    DoBlock,
    DoCall,
    Entry,
    Expr,
    ExprStmt,
    For,
    If,
    Interpolation,
    Invocation,
    InvocationKind,
    LegacyDirection,
    LegacyIO,
    Let,
    Loop,
    LoopKind,
    Modifier,
    Name,
    Number,
    ObjectExpr,
    Option,
    Parallel,
    PipeKind,
    Pipeline,
    PipeOp,
    Property,
    Ref,
    Repeat,
    Return,
    Script,
    Stmt,
    StringLit,
    Throw,
    Try,
    Use,
    Value,
)

SpanFn = Callable[[int, int, int, int], Span]
Node = Any  # a lark Tree (`.data`, `.children`) or Token (a str with positions)

# the parser keeps every token (it is faster than filtering them, and keywords give spans
# their true start); these are the ones that carry meaning for the IR
_MEANINGFUL = frozenset(
    {
        "NAME",
        "PATH_TARGET",
        "STRING",
        "TRIPLE_STRING",
        "NUMBER",
        "LET",
        "CONST",
        "TRUE",
        "FALSE",
        "NULL",
        "PIPE_NAME",
        "BARE_TEXT",
        "LOOP_TEXT",
        "BOLD_TEXT",
        "TRIPLE_TEXT",
    }
)
_LAYOUT = frozenset({"_NL", "_INDENT", "_DEDENT"})

_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "{": "{", "}": "}"}
_INTERPOLATION = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*")
_COMPOUND = frozenset({"do_block", "parallel_block", "repeat_block", "for_block", "loop_block"})
_LOOP_HEADS = {"loop_until": LoopKind.UNTIL, "loop_while": LoopKind.WHILE}


def build(tree: Node, span_fn: SpanFn, text: str) -> Script:
    """The typed script of a successful parse of `text` (the dedented fence content)."""
    builder = _Builder(span_fn, text)
    lines = text.rstrip("\n").split("\n")
    span = span_fn(1, 1, len(lines), len(lines[-1]) + 1)
    return Script(statements=builder.statements(_kids(tree)), span=span)


def _is_token(node: Node) -> bool:
    return isinstance(node, str)


def _kids(node: Node) -> list[Node]:
    """A tree's children without keywords, punctuation and layout tokens."""
    return [c for c in node.children if not _is_token(c) or c.type in _MEANINGFUL]


def _edge_token(node: Node, *, last: bool) -> Node | None:
    """The first (or last) token of a subtree that is not layout."""
    for child in reversed(node.children) if last else node.children:
        if isinstance(child, str):
            if getattr(child, "type", "") not in _LAYOUT:
                return child
            continue
        found = _edge_token(child, last=last)
        if found is not None:
            return found
    return None


def _trees(children: list[Node], data: str) -> list[Node]:
    return [c for c in children if not _is_token(c) and c.data == data]


def _tokens(children: list[Node]) -> list[Node]:
    return [c for c in children if _is_token(c)]


def _tree(children: list[Node], data: str) -> Node | None:
    return next((c for c in children if not _is_token(c) and c.data == data), None)


class _Builder:
    def __init__(self, span_fn: SpanFn, text: str) -> None:
        self.span_fn = span_fn
        self.lines = text.split("\n")

    # -- positions ------------------------------------------------------------------------

    def span(self, node: Node) -> Span:
        if isinstance(node, str):
            token: Any = node
            return self.span_fn(token.line, token.column, token.end_line, token.end_column)
        first = _edge_token(node, last=False)
        last = _edge_token(node, last=True)
        if first is None or last is None:  # no tokens at all: an empty script
            return self.span_fn(1, 1, 1, 1)
        return self.span_fn(first.line, first.column, last.end_line, last.end_column)

    def head_span(self, node: Node) -> Span:
        """The first line of a compound statement (its header), trailing blanks trimmed."""
        first = _edge_token(node, last=False)
        line, column = (first.line, first.column) if first is not None else (1, 1)
        text = self.lines[line - 1] if line <= len(self.lines) else ""
        return self.span_fn(line, column, line, len(text.rstrip()) + 1)

    def name(self, token: Node) -> Name:
        return Name(text=str(token), span=self.span(token))

    # -- statements -----------------------------------------------------------------------

    def statements(self, children: list[Node]) -> tuple[Stmt, ...]:
        return tuple(self.statement(child) for child in children)

    def body(self, node: Node | None) -> tuple[Stmt, ...]:
        return self.statements(_kids(node)) if node is not None else ()

    def statement(self, node: Node) -> Stmt:
        kind = node.data
        if kind in _COMPOUND:
            return self.compound(node)
        handler: Callable[[Node], Stmt] = getattr(self, f"_stmt_{kind}")
        return handler(node)

    def _stmt_use_decl(self, node: Node) -> Stmt:
        alias = _tokens(_kids(node))
        return Use(
            source=self.string(_kids(node)[0]),
            alias=self.name(alias[0]) if alias else None,
            span=self.span(node),
        )

    def _stmt_agent_def(self, node: Node) -> Stmt:
        name, *props = _kids(node)
        return AgentDef(
            name=self.name(name), properties=self.properties(props), span=self.span(node)
        )

    def _stmt_block_def(self, node: Node) -> Stmt:
        params = _tree(_kids(node), "params")
        return BlockDef(
            name=self.name(_kids(node)[0]),
            params=tuple(self.name(t) for t in _kids(params)) if params is not None else (),
            body=self.body(_tree(_kids(node), "body")),
            span=self.span(node),
        )

    def _stmt_binding(self, node: Node) -> Stmt:
        keyword, target, value = _kids(node)
        return Let(
            const=str(keyword) == "const",
            names=tuple(self.name(t) for t in _kids(target)),
            destructured=target.data == "target_destructure",
            value=self.value(value),
            span=self.span(node),
        )

    def _stmt_assignment(self, node: Node) -> Stmt:
        target, value = _kids(node)
        return Assign(target=self.reference(target), value=self.value(value), span=self.span(node))

    def _stmt_return_stmt(self, node: Node) -> Stmt:
        value = self.value(_kids(node)[0]) if _kids(node) else None
        return Return(value=value, span=self.span(node))

    def _stmt_throw_stmt(self, node: Node) -> Stmt:
        value = self.value(_kids(node)[0]) if _kids(node) else None
        return Throw(value=value, span=self.span(node))

    def _stmt_invocation(self, node: Node) -> Stmt:
        return ExprStmt(value=self.invocation(node), span=self.span(node))

    def _stmt_do_call_stmt(self, node: Node) -> Stmt:
        return ExprStmt(value=self.do_call(_kids(node)[0]), span=self.span(node))

    def _stmt_if_stmt(self, node: Node) -> Stmt:
        condition, body, *rest = _kids(node)
        branches = [
            Branch(condition=self.discretion(condition), body=self.body(body), span=self.span(node))
        ]
        for clause in rest:
            if clause.data == "elif_clause":
                cond, clause_body = _kids(clause)
                branches.append(
                    Branch(
                        condition=self.discretion(cond),
                        body=self.body(clause_body),
                        span=self.span(clause),
                    )
                )
            else:
                branches.append(
                    Branch(condition=None, body=self.body(_kids(clause)[0]), span=self.span(clause))
                )
        return If(branches=tuple(branches), span=self.span(node))

    def _stmt_choice_block(self, node: Node) -> Stmt:
        criteria, *options = _kids(node)
        return Choice(
            criteria=self.discretion(criteria),
            options=tuple(
                Option(
                    label=self.string(_kids(o)[0]),
                    body=self.body(_kids(o)[1]),
                    span=self.span(o),
                )
                for o in options
            ),
            span=self.span(node),
        )

    def _stmt_try_block(self, node: Node) -> Stmt:
        catch = _tree(_kids(node), "catch_clause")
        finally_clause = _tree(_kids(node), "finally_clause")
        return Try(
            body=self.body(_kids(node)[0]),
            catch=None
            if catch is None
            else Catch(
                name=next((self.name(t) for t in _tokens(_kids(catch))), None),
                body=self.body(_tree(_kids(catch), "body")),
                span=self.span(catch),
            ),
            finally_body=None if finally_clause is None else self.body(_kids(finally_clause)[0]),
            span=self.span(node),
            head_span=self.head_span(node),
        )

    def _stmt_legacy_input(self, node: Node) -> Stmt:
        name, *rest = _kids(node)
        return LegacyIO(
            direction=LegacyDirection.INPUT,
            name=self.name(name),
            value=self.expr(rest[0]) if rest else None,
            span=self.span(node),
        )

    def _stmt_legacy_output(self, node: Node) -> Stmt:
        name, value = _kids(node)
        return LegacyIO(
            direction=LegacyDirection.OUTPUT,
            name=self.name(name),
            value=self.value(value),
            span=self.span(node),
        )

    # -- compound statements (also values: `let xs = parallel for …`) ----------------------

    def compound(self, node: Node) -> DoBlock | Parallel | Repeat | For | Loop:
        children = _kids(node)
        span = self.span(node)
        body = self.body(_tree(children, "body"))
        parallel = _tree(children, "parallel_kw") is not None
        if node.data == "do_block":
            return DoBlock(body=body, span=span)
        if node.data == "parallel_block":
            return Parallel(modifiers=self.modifiers(children), body=body, span=span)
        values = [c for c in children if not _is_token(c) and c.data not in _NON_VALUES]
        names = [self.name(t) for t in _tokens(children)]
        if node.data == "repeat_block":
            return Repeat(
                count=self.expr(values[0]),
                alias=names[0] if names else None,
                parallel=parallel,
                body=body,
                span=span,
            )
        if node.data == "for_block":
            return For(
                names=tuple(names),
                iterable=self.expr(values[0]),
                parallel=parallel,
                modifiers=self.modifiers(children),
                body=body,
                span=span,
            )
        return self.loop(node, names, body)

    def loop(self, node: Node, names: list[Name], body: tuple[Stmt, ...]) -> Loop:
        head = next(
            (
                c
                for c in _kids(node)
                if not _is_token(c) and c.data.startswith("loop_") and c.data != "loop_max"
            ),
            None,
        )
        bound = _tree(_kids(node), "loop_max")
        kind, condition, item, iterable = LoopKind.OPEN, None, None, None
        if head is not None and head.data == "loop_for_each":
            kind, item, iterable = (
                LoopKind.FOR_EACH,
                self.name(_kids(head)[0]),
                self.expr(_kids(head)[1]),
            )
        elif head is not None:
            kind, condition = _LOOP_HEADS[head.data], self.discretion(_kids(head)[0])
        return Loop(
            kind=kind,
            condition=condition,
            item=item,
            iterable=iterable,
            max=self.expr(_kids(bound)[0]) if bound is not None else None,
            alias=names[0] if names else None,
            body=body,
            span=self.span(node),
            head_span=self.head_span(node),
        )

    def modifiers(self, children: list[Node]) -> tuple[Modifier, ...]:
        node = _tree(children, "modifiers")
        if node is None:
            return ()
        result = []
        for modifier in _kids(node):
            key: Name | None
            value: Expr
            if modifier.data == "modifier_flag":
                key, value = None, self.string(_kids(modifier)[0])
            else:
                key, value = self.name(_kids(modifier)[0]), self.expr(_kids(modifier)[1])
            result.append(Modifier(key=key, value=value, span=self.span(modifier)))
        return tuple(result)

    # -- values ---------------------------------------------------------------------------

    def value(self, node: Node) -> Value:
        """What follows `=`, `return` or `throw`."""
        if node.data in _COMPOUND:
            return self.compound(node)
        if node.data == "invocation":
            return self.invocation(node)
        source, *ops = _kids(node)  # value_rhs
        if not ops:
            return self.expr(source)
        return Pipeline(
            source=self.expr(source),
            ops=tuple(self.pipe_op(op) for op in ops),
            span=self.span(node),
        )

    def pipe_op(self, node: Node) -> PipeOp:
        names: tuple[Name, ...] = ()
        if node.data == "pipe_reduce":
            acc, item, body = _kids(node)
            kind, names = PipeKind.REDUCE, (self.name(acc), self.name(item))
        else:
            op, body = _kids(node)
            kind = PipeKind(str(op))
        return PipeOp(kind=kind, names=names, body=self.body(body), span=self.span(node))

    def expr(self, node: Node) -> Expr:
        kind = node.data
        span = self.span(node)
        if kind == "string":
            return self.string(node)
        if kind == "number":
            raw = str(_kids(node)[0])
            number: int | float = float(raw) if "." in raw else int(raw)
            return Number(value=number, raw=raw, span=span)
        if kind == "constant":
            word = str(_kids(node)[0])
            return Constant(value=None if word == "null" else word == "true", span=span)
        if kind == "reference":
            return self.reference(node)
        if kind == "array":
            return ArrayExpr(items=tuple(self.expr(c) for c in _kids(node)), span=span)
        if kind == "object":
            return ObjectExpr(entries=tuple(self.entry(c) for c in _kids(node)), span=span)
        if kind == "do_call":
            return self.do_call(node)
        return self.invocation_head(node, (), span)

    def entry(self, node: Node) -> Entry:
        key = self.name(_kids(node)[0])
        if len(_kids(node)) > 1:
            value = self.expr(_kids(node)[1])
            return Entry(key=key, value=value, shorthand=False, span=self.span(node))
        ref = Ref(parts=(key.text,), span=key.span, head_span=key.span)
        return Entry(key=key, value=ref, shorthand=True, span=self.span(node))

    def reference(self, node: Node) -> Ref:
        parts = tuple(str(t) for t in _kids(node))
        return Ref(parts=parts, span=self.span(node), head_span=self.span(_kids(node)[0]))

    def do_call(self, node: Node) -> DoCall:
        args = _tree(_kids(node), "args")
        return DoCall(
            block=self.name(_kids(node)[0]),
            args=None if args is None else tuple(self.expr(a) for a in _kids(args)),
            span=self.span(node),
        )

    def invocation(self, node: Node) -> Invocation:
        head, *props = _kids(node)
        return self.invocation_head(head, self.properties(props), self.span(node))

    def invocation_head(
        self, head: Node, properties: tuple[Property, ...], span: Span
    ) -> Invocation:
        kind = {"call_head": InvocationKind.CALL, "resume_head": InvocationKind.RESUME}.get(
            head.data, InvocationKind.SESSION
        )
        children = _kids(head)
        target: Name | None = None
        prompt = label = None
        if head.data == "session_prompt":
            prompt = self.string(children[0])
        elif head.data == "session_named":
            label, target = self.name(children[0]), self.name(children[1])
        elif _is_token(children[0]):
            target = self.name(children[0])
        else:  # `call "std/…"`: the string is the target
            literal = self.string(children[0])
            target = Name(text=literal.value, span=literal.span)
        return Invocation(
            kind=kind,
            target=target,
            target_is_string=head.data == "call_head" and not _is_token(children[0]),
            prompt=prompt,
            label=label,
            properties=properties,
            span=span,
        )

    def properties(self, nodes: list[Node]) -> tuple[Property, ...]:
        result = []
        for node in nodes:
            key, *rest = _kids(node)
            if node.data == "property_group":
                value, children = None, self.properties(rest)
            else:
                value, children = self.expr(rest[0]), ()
            result.append(
                Property(key=self.name(key), value=value, children=children, span=self.span(node))
            )
        return tuple(result)

    def discretion(self, node: Node) -> Discretion:
        token = _kids(node)[0]
        raw = str(token)
        style = DiscretionStyle.BARE
        if token.type == "TRIPLE_TEXT":
            style, raw = DiscretionStyle.TRIPLE, raw[3:-3]
        elif token.type == "BOLD_TEXT":
            style, raw = DiscretionStyle.BOLD, raw[2:-2]
        return Discretion(text=" ".join(raw.split()), style=style, span=self.span(token))

    # -- strings --------------------------------------------------------------------------

    def string(self, node: Node) -> StringLit:
        token = _kids(node)[0] if not _is_token(node) else node
        raw = str(token)
        quote = 3 if raw.startswith('"""') else 1
        body = raw[quote:-quote]
        out: list[str] = []
        interpolations: list[Interpolation] = []
        bad: list[tuple[str, Span]] = []
        index = 0
        while index < len(body):
            char = body[index]
            if char == "\\" and index + 1 < len(body):
                escape = body[index + 1]
                if escape in _ESCAPES:
                    out.append(_ESCAPES[escape])
                else:
                    bad.append((char + escape, self._offset_span(token, quote + index, 2)))
                    out.append(char + escape)
                index += 2
                continue
            if char == "{":
                close = body.find("}", index + 1)
                inner = body[index + 1 : close] if close > 0 else ""
                if _INTERPOLATION.fullmatch(inner):
                    interpolations.append(
                        Interpolation(
                            parts=tuple(inner.split(".")),
                            span=self._offset_span(token, quote + index + 1, len(inner)),
                        )
                    )
            out.append(char)
            index += 1
        return StringLit(
            value="".join(out),
            raw=raw,
            triple=quote == 3,
            interpolations=tuple(interpolations),
            bad_escapes=tuple(bad),
            span=self.span(token),
        )

    def _offset_span(self, token: Node, offset: int, width: int) -> Span:
        """The span of `width` characters at `offset` inside a (possibly multi-line) token."""
        before = str(token)[:offset]
        newlines = before.count("\n")
        line = token.line + newlines
        column = (token.column + offset) if not newlines else len(before) - before.rfind("\n")
        return self.span_fn(line, column, line, column + width)


_NON_VALUES = frozenset({"body", "parallel_kw", "modifiers"})
