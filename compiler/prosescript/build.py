"""ProseScript parse trees → typed statements (duck-typed: lark itself stays in parse.py)."""

from __future__ import annotations

from collections.abc import Callable

from .ir import (
    AgentDef,
    Append,
    Apply,
    Arg,
    Assign,
    BlockDef,
    Branch,
    Break,
    Catch,
    Choice,
    Continue,
    DoBlock,
    ExprStmt,
    Filter,
    For,
    If,
    LegacyDirection,
    LegacyIO,
    Let,
    Loop,
    LoopKind,
    Name,
    Option,
    Parallel,
    PipeKind,
    Pipeline,
    PipeOp,
    Repeat,
    Return,
    Script,
    Stmt,
    Throw,
    Try,
    Use,
    Value,
)
from .values import Node, SpanFn, ValueBuilder, is_token, kids, tokens, tree

_COMPOUND = frozenset({"do_block", "parallel_block", "repeat_block", "for_block", "loop_block"})
_LOOP_HEADS = {"loop_until": LoopKind.UNTIL, "loop_while": LoopKind.WHILE}
_NON_VALUES = frozenset({"body", "parallel_kw", "modifiers"})


def build(root: Node, span_fn: SpanFn, text: str) -> Script:
    """The typed script of a successful parse of `text` (the dedented fence content)."""
    builder = _StatementBuilder(span_fn, text)
    lines = text.rstrip("\n").split("\n")
    span = span_fn(1, 1, len(lines), len(lines[-1]) + 1)
    return Script(statements=builder.statements(kids(root)), span=span)


class _StatementBuilder(ValueBuilder):
    """Statements, blocks and compound values on top of the expression builder."""

    def statements(self, children: list[Node]) -> tuple[Stmt, ...]:
        return tuple(self.statement(child) for child in children)

    def body(self, node: Node | None) -> tuple[Stmt, ...]:
        return self.statements(kids(node)) if node is not None else ()

    def statement(self, node: Node) -> Stmt:
        kind = node.data
        if kind in _COMPOUND:
            return self.compound(node)
        handler: Callable[[Node], Stmt] = getattr(self, f"_stmt_{kind}")
        return handler(node)

    def _stmt_use_decl(self, node: Node) -> Stmt:
        alias = tokens(kids(node))
        return Use(
            source=self.string(kids(node)[0]),
            alias=self.name(alias[0]) if alias else None,
            span=self.span(node),
        )

    def _stmt_agent_def(self, node: Node) -> Stmt:
        name, *props = kids(node)
        return AgentDef(
            name=self.name(name), properties=self.properties(props), span=self.span(node)
        )

    def _stmt_block_def(self, node: Node) -> Stmt:
        params = tree(kids(node), "params")
        return BlockDef(
            name=self.name(kids(node)[0]),
            params=tuple(self.name(t) for t in kids(params)) if params is not None else (),
            body=self.body(tree(kids(node), "body")),
            span=self.span(node),
        )

    def _stmt_binding(self, node: Node) -> Stmt:
        keyword, target, value = kids(node)
        return Let(
            const=str(keyword) == "const",
            names=tuple(self.name(t) for t in kids(target)),
            destructured=target.data == "target_destructure",
            value=self.value(value),
            span=self.span(node),
        )

    def _stmt_assignment(self, node: Node) -> Stmt:
        target, value = kids(node)
        return Assign(target=self.place(target), value=self.value(value), span=self.span(node))

    def _stmt_append_to(self, node: Node) -> Stmt:
        item, target = kids(node)
        return Append(item=self.expr(item), target=self.place(target), span=self.span(node))

    _stmt_record_stmt = _stmt_append_to

    def _stmt_append_into(self, node: Node) -> Stmt:
        target, item = kids(node)
        return Append(item=self.expr(item), target=self.place(target), span=self.span(node))

    def _stmt_break_stmt(self, node: Node) -> Stmt:
        return Break(span=self.span(node))

    def _stmt_continue_stmt(self, node: Node) -> Stmt:
        return Continue(span=self.span(node))

    def _stmt_apply_stmt(self, node: Node) -> Stmt:
        return ExprStmt(value=self.apply(kids(node)[0]), span=self.span(node))

    def _stmt_command_stmt(self, node: Node) -> Stmt:
        command, value = kids(node)
        arg = Arg(name=None, value=self.expr(value), span=self.span(value))
        apply = Apply(
            function=self.name(command), args=(arg,), parenthesized=False, span=self.span(node)
        )
        return ExprStmt(value=apply, span=self.span(node))

    def _stmt_return_stmt(self, node: Node) -> Stmt:
        value = self.value(kids(node)[0]) if kids(node) else None
        return Return(value=value, span=self.span(node))

    def _stmt_throw_stmt(self, node: Node) -> Stmt:
        value = self.value(kids(node)[0]) if kids(node) else None
        return Throw(value=value, span=self.span(node))

    def _stmt_invocation(self, node: Node) -> Stmt:
        return ExprStmt(value=self.invocation(node), span=self.span(node))

    def _stmt_do_call_stmt(self, node: Node) -> Stmt:
        return ExprStmt(value=self.do_call(kids(node)[0]), span=self.span(node))

    def _stmt_if_stmt(self, node: Node) -> Stmt:
        condition, body, *rest = kids(node)
        branches = [
            Branch(condition=self.discretion(condition), body=self.body(body), span=self.span(node))
        ]
        for clause in rest:
            if clause.data == "elif_clause":
                cond, clause_body = kids(clause)
                branches.append(
                    Branch(
                        condition=self.discretion(cond),
                        body=self.body(clause_body),
                        span=self.span(clause),
                    )
                )
            else:
                branches.append(
                    Branch(condition=None, body=self.body(kids(clause)[0]), span=self.span(clause))
                )
        return If(branches=tuple(branches), span=self.span(node))

    def _stmt_choice_block(self, node: Node) -> Stmt:
        criteria, *options = kids(node)
        return Choice(
            criteria=self.discretion(criteria),
            options=tuple(
                Option(
                    label=self.string(kids(o)[0]),
                    body=self.body(kids(o)[1]),
                    span=self.span(o),
                )
                for o in options
            ),
            span=self.span(node),
        )

    def _stmt_try_block(self, node: Node) -> Stmt:
        catch = tree(kids(node), "catch_clause")
        finally_clause = tree(kids(node), "finally_clause")
        return Try(
            body=self.body(kids(node)[0]),
            catch=None
            if catch is None
            else Catch(
                name=next((self.name(t) for t in tokens(kids(catch))), None),
                body=self.body(tree(kids(catch), "body")),
                span=self.span(catch),
            ),
            finally_body=None if finally_clause is None else self.body(kids(finally_clause)[0]),
            span=self.span(node),
            head_span=self.head_span(node),
        )

    def _stmt_legacy_input(self, node: Node) -> Stmt:
        name, *rest = kids(node)
        return LegacyIO(
            direction=LegacyDirection.INPUT,
            name=self.name(name),
            value=self.expr(rest[0]) if rest else None,
            span=self.span(node),
        )

    def _stmt_legacy_output(self, node: Node) -> Stmt:
        name, value = kids(node)
        return LegacyIO(
            direction=LegacyDirection.OUTPUT,
            name=self.name(name),
            value=self.value(value),
            span=self.span(node),
        )

    # -- compound statements (also values: `let xs = parallel for …`) ----------------------

    def compound(self, node: Node) -> DoBlock | Parallel | Repeat | For | Loop:
        children = kids(node)
        span = self.span(node)
        body = self.body(tree(children, "body"))
        parallel = tree(children, "parallel_kw") is not None
        if node.data == "do_block":
            return DoBlock(body=body, span=span)
        if node.data == "parallel_block":
            return Parallel(modifiers=self.modifiers(children), body=body, span=span)
        values = [c for c in children if not is_token(c) and c.data not in _NON_VALUES]
        names = [self.name(t) for t in tokens(children)]
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
                for c in kids(node)
                if not is_token(c) and c.data.startswith("loop_") and c.data != "loop_max"
            ),
            None,
        )
        bound = tree(kids(node), "loop_max")
        kind, condition, item, iterable = LoopKind.OPEN, None, None, None
        if head is not None and head.data == "loop_for_each":
            kind, item, iterable = (
                LoopKind.FOR_EACH,
                self.name(kids(head)[0]),
                self.expr(kids(head)[1]),
            )
        elif head is not None:
            kind, condition = _LOOP_HEADS[head.data], self.discretion(kids(head)[0])
        return Loop(
            kind=kind,
            condition=condition,
            item=item,
            iterable=iterable,
            max=self.expr(kids(bound)[0]) if bound is not None else None,
            alias=names[0] if names else None,
            body=body,
            span=self.span(node),
            head_span=self.head_span(node),
        )

    def value(self, node: Node) -> Value:
        """What follows `=`, `return` or `throw`."""
        if node.data in _COMPOUND:
            return self.compound(node)
        if node.data == "invocation":
            return self.invocation(node)
        if node.data == "filter_expr":
            source, condition = kids(node)
            return Filter(
                source=self.expr(source), condition=self.where(condition), span=self.span(node)
            )
        source, *ops = kids(node)  # value_rhs
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
            acc, item, body = kids(node)
            kind, names = PipeKind.REDUCE, (self.name(acc), self.name(item))
        else:
            op, body = kids(node)
            kind = PipeKind(str(op))
        return PipeOp(kind=kind, names=names, body=self.body(body), span=self.span(node))
