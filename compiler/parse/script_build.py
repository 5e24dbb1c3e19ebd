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
Node = Any  # a lark Tree (`.data`, `.children`, `.meta`) or Token (a str with positions)

_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "{": "{", "}": "}"}
_INTERPOLATION = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*")
_COMPOUND = frozenset({"do_block", "parallel_block", "repeat_block", "for_block", "loop_block"})
_LOOP_HEADS = {"loop_until": LoopKind.UNTIL, "loop_while": LoopKind.WHILE}


def build(tree: Node, span_fn: SpanFn, text: str) -> Script:
    """The typed script of a successful parse of `text` (the dedented fence content)."""
    builder = _Builder(span_fn, text)
    lines = text.rstrip("\n").split("\n")
    span = span_fn(1, 1, len(lines), len(lines[-1]) + 1)
    return Script(statements=builder.statements(tree.children), span=span)


def _is_token(node: Node) -> bool:
    return isinstance(node, str)


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
        if _is_token(node):
            return self.span_fn(node.line, node.column, node.end_line, node.end_column)
        meta = node.meta
        return self.span_fn(meta.line, meta.column, meta.end_line, meta.end_column)

    def head_span(self, node: Node) -> Span:
        """The first line of a compound statement (its header), trailing blanks trimmed."""
        line = node.meta.line
        text = self.lines[line - 1] if line <= len(self.lines) else ""
        return self.span_fn(line, node.meta.column, line, len(text.rstrip()) + 1)

    def name(self, token: Node) -> Name:
        return Name(text=str(token), span=self.span(token))

    # -- statements -----------------------------------------------------------------------

    def statements(self, children: list[Node]) -> tuple[Stmt, ...]:
        return tuple(self.statement(child) for child in children)

    def body(self, node: Node | None) -> tuple[Stmt, ...]:
        return self.statements(node.children) if node is not None else ()

    def statement(self, node: Node) -> Stmt:
        kind = node.data
        if kind in _COMPOUND:
            return self.compound(node)
        handler: Callable[[Node], Stmt] = getattr(self, f"_stmt_{kind}")
        return handler(node)

    def _stmt_use_decl(self, node: Node) -> Stmt:
        alias = _tokens(node.children)
        return Use(
            source=self.string(node.children[0]),
            alias=self.name(alias[0]) if alias else None,
            span=self.span(node),
        )

    def _stmt_agent_def(self, node: Node) -> Stmt:
        name, *props = node.children
        return AgentDef(
            name=self.name(name), properties=self.properties(props), span=self.span(node)
        )

    def _stmt_block_def(self, node: Node) -> Stmt:
        params = _tree(node.children, "params")
        return BlockDef(
            name=self.name(node.children[0]),
            params=tuple(self.name(t) for t in params.children) if params is not None else (),
            body=self.body(_tree(node.children, "body")),
            span=self.span(node),
        )

    def _stmt_binding(self, node: Node) -> Stmt:
        keyword, target, value = node.children
        return Let(
            const=str(keyword) == "const",
            names=tuple(self.name(t) for t in target.children),
            destructured=target.data == "target_destructure",
            value=self.value(value),
            span=self.span(node),
        )

    def _stmt_assignment(self, node: Node) -> Stmt:
        target, value = node.children
        return Assign(target=self.reference(target), value=self.value(value), span=self.span(node))

    def _stmt_return_stmt(self, node: Node) -> Stmt:
        value = self.value(node.children[0]) if node.children else None
        return Return(value=value, span=self.span(node))

    def _stmt_throw_stmt(self, node: Node) -> Stmt:
        value = self.value(node.children[0]) if node.children else None
        return Throw(value=value, span=self.span(node))

    def _stmt_invocation(self, node: Node) -> Stmt:
        return ExprStmt(value=self.invocation(node), span=self.span(node))

    def _stmt_do_call_stmt(self, node: Node) -> Stmt:
        return ExprStmt(value=self.do_call(node.children[0]), span=self.span(node))

    def _stmt_if_stmt(self, node: Node) -> Stmt:
        condition, body, *rest = node.children
        branches = [
            Branch(condition=self.discretion(condition), body=self.body(body), span=self.span(node))
        ]
        for clause in rest:
            if clause.data == "elif_clause":
                cond, clause_body = clause.children
                branches.append(
                    Branch(
                        condition=self.discretion(cond),
                        body=self.body(clause_body),
                        span=self.span(clause),
                    )
                )
            else:
                branches.append(
                    Branch(
                        condition=None, body=self.body(clause.children[0]), span=self.span(clause)
                    )
                )
        return If(branches=tuple(branches), span=self.span(node))

    def _stmt_choice_block(self, node: Node) -> Stmt:
        criteria, *options = node.children
        return Choice(
            criteria=self.discretion(criteria),
            options=tuple(
                Option(
                    label=self.string(o.children[0]),
                    body=self.body(o.children[1]),
                    span=self.span(o),
                )
                for o in options
            ),
            span=self.span(node),
        )

    def _stmt_try_block(self, node: Node) -> Stmt:
        catch = _tree(node.children, "catch_clause")
        finally_clause = _tree(node.children, "finally_clause")
        return Try(
            body=self.body(node.children[0]),
            catch=None
            if catch is None
            else Catch(
                name=next((self.name(t) for t in _tokens(catch.children)), None),
                body=self.body(_tree(catch.children, "body")),
                span=self.span(catch),
            ),
            finally_body=None if finally_clause is None else self.body(finally_clause.children[0]),
            span=self.span(node),
            head_span=self.head_span(node),
        )

    def _stmt_legacy_input(self, node: Node) -> Stmt:
        name, *rest = node.children
        return LegacyIO(
            direction=LegacyDirection.INPUT,
            name=self.name(name),
            value=self.expr(rest[0]) if rest else None,
            span=self.span(node),
        )

    def _stmt_legacy_output(self, node: Node) -> Stmt:
        name, value = node.children
        return LegacyIO(
            direction=LegacyDirection.OUTPUT,
            name=self.name(name),
            value=self.value(value),
            span=self.span(node),
        )

    # -- compound statements (also values: `let xs = parallel for …`) ----------------------

    def compound(self, node: Node) -> DoBlock | Parallel | Repeat | For | Loop:
        children = node.children
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
                for c in node.children
                if not _is_token(c) and c.data.startswith("loop_") and c.data != "loop_max"
            ),
            None,
        )
        bound = _tree(node.children, "loop_max")
        kind, condition, item, iterable = LoopKind.OPEN, None, None, None
        if head is not None and head.data == "loop_for_each":
            kind, item, iterable = (
                LoopKind.FOR_EACH,
                self.name(head.children[0]),
                self.expr(head.children[1]),
            )
        elif head is not None:
            kind, condition = _LOOP_HEADS[head.data], self.discretion(head.children[0])
        return Loop(
            kind=kind,
            condition=condition,
            item=item,
            iterable=iterable,
            max=self.expr(bound.children[0]) if bound is not None else None,
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
        for modifier in node.children:
            key: Name | None
            value: Expr
            if modifier.data == "modifier_flag":
                key, value = None, self.string(modifier.children[0])
            else:
                key, value = self.name(modifier.children[0]), self.expr(modifier.children[1])
            result.append(Modifier(key=key, value=value, span=self.span(modifier)))
        return tuple(result)

    # -- values ---------------------------------------------------------------------------

    def value(self, node: Node) -> Value:
        """What follows `=`, `return` or `throw`."""
        if node.data in _COMPOUND:
            return self.compound(node)
        if node.data == "invocation":
            return self.invocation(node)
        source, *ops = node.children  # value_rhs
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
            acc, item, body = node.children
            kind, names = PipeKind.REDUCE, (self.name(acc), self.name(item))
        else:
            op, body = node.children
            kind = PipeKind(str(op))
        return PipeOp(kind=kind, names=names, body=self.body(body), span=self.span(node))

    def expr(self, node: Node) -> Expr:
        kind = node.data
        span = self.span(node)
        if kind == "string":
            return self.string(node)
        if kind == "number":
            raw = str(node.children[0])
            number: int | float = float(raw) if "." in raw else int(raw)
            return Number(value=number, raw=raw, span=span)
        if kind == "constant":
            word = str(node.children[0])
            return Constant(value=None if word == "null" else word == "true", span=span)
        if kind == "reference":
            return self.reference(node)
        if kind == "array":
            return ArrayExpr(items=tuple(self.expr(c) for c in node.children), span=span)
        if kind == "object":
            return ObjectExpr(entries=tuple(self.entry(c) for c in node.children), span=span)
        if kind == "do_call":
            return self.do_call(node)
        return self.invocation_head(node, (), span)

    def entry(self, node: Node) -> Entry:
        key = self.name(node.children[0])
        if len(node.children) > 1:
            value = self.expr(node.children[1])
            return Entry(key=key, value=value, shorthand=False, span=self.span(node))
        ref = Ref(parts=(key.text,), span=key.span, head_span=key.span)
        return Entry(key=key, value=ref, shorthand=True, span=self.span(node))

    def reference(self, node: Node) -> Ref:
        parts = tuple(str(t) for t in node.children)
        return Ref(parts=parts, span=self.span(node), head_span=self.span(node.children[0]))

    def do_call(self, node: Node) -> DoCall:
        args = _tree(node.children, "args")
        return DoCall(
            block=self.name(node.children[0]),
            args=None if args is None else tuple(self.expr(a) for a in args.children),
            span=self.span(node),
        )

    def invocation(self, node: Node) -> Invocation:
        head, *props = node.children
        return self.invocation_head(head, self.properties(props), self.span(node))

    def invocation_head(
        self, head: Node, properties: tuple[Property, ...], span: Span
    ) -> Invocation:
        kind = {"call_head": InvocationKind.CALL, "resume_head": InvocationKind.RESUME}.get(
            head.data, InvocationKind.SESSION
        )
        children = head.children
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
            key, *rest = node.children
            if node.data == "property_group":
                value, children = None, self.properties(rest)
            else:
                value, children = self.expr(rest[0]), ()
            result.append(
                Property(key=self.name(key), value=value, children=children, span=self.span(node))
            )
        return tuple(result)

    def discretion(self, node: Node) -> Discretion:
        token = node.children[0]
        raw = str(token)
        style = DiscretionStyle.BARE
        if token.type == "TRIPLE_TEXT":
            style, raw = DiscretionStyle.TRIPLE, raw[3:-3]
        elif token.type == "BOLD_TEXT":
            style, raw = DiscretionStyle.BOLD, raw[2:-2]
        return Discretion(text=" ".join(raw.split()), style=style, span=self.span(token))

    # -- strings --------------------------------------------------------------------------

    def string(self, node: Node) -> StringLit:
        token = node.children[0] if not _is_token(node) else node
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
