"""ProseScript parse trees → typed expressions, strings and property blocks (duck-typed)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..ir import Span
from .ir import (
    Apply,
    Arg,
    ArrayExpr,
    Constant,
    Discretion,
    DiscretionStyle,
    DoCall,
    Entry,
    Expr,
    Index,
    Interpolation,
    Invocation,
    InvocationKind,
    Member,
    Modifier,
    Name,
    Number,
    ObjectExpr,
    Property,
    Ref,
    StringLit,
)

SpanFn = Callable[[int, int, int, int], Span]
Node = Any  # a lark Tree (`.data`, `.children`) or Token (a str with positions)

# the parser keeps every token (it is faster than filtering them, and keywords give spans
# their true start); these are the ones that carry meaning for the IR
_MEANINGFUL = frozenset(
    {
        "NAME",
        "USE_ALIAS",
        "FUNC_NAME",
        "COMMAND",
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
        "WHERE_TEXT",
    }
)
_LAYOUT = frozenset({"_NL", "_INDENT", "_DEDENT"})

_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "{": "{", "}": "}"}
_INTERPOLATION = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*")


def is_token(node: Node) -> bool:
    return isinstance(node, str)


def kids(node: Node) -> list[Node]:
    """A tree's children without keywords, punctuation and layout tokens."""
    return [c for c in node.children if not is_token(c) or c.type in _MEANINGFUL]


def edge_token(node: Node, *, last: bool) -> Node | None:
    """The first (or last) token of a subtree that is not layout."""
    for child in reversed(node.children) if last else node.children:
        if isinstance(child, str):
            if getattr(child, "type", "") not in _LAYOUT:
                return child
            continue
        found = edge_token(child, last=last)
        if found is not None:
            return found
    return None


def tokens(children: list[Node]) -> list[Node]:
    return [c for c in children if is_token(c)]


def tree(children: list[Node], data: str) -> Node | None:
    return next((c for c in children if not is_token(c) and c.data == data), None)


class ValueBuilder:
    """Builds expressions; the statement builder extends it with statements and blocks."""

    def __init__(self, span_fn: SpanFn, text: str) -> None:
        self.span_fn = span_fn
        self.lines = text.split("\n")

    # -- positions ------------------------------------------------------------------------

    def span(self, node: Node) -> Span:
        if isinstance(node, str):
            token: Any = node
            return self.span_fn(token.line, token.column, token.end_line, token.end_column)
        first = edge_token(node, last=False)
        last = edge_token(node, last=True)
        if first is None or last is None:  # no tokens at all: an empty script
            return self.span_fn(1, 1, 1, 1)
        return self.span_fn(first.line, first.column, last.end_line, last.end_column)

    def head_span(self, node: Node) -> Span:
        """The first line of a compound statement (its header), trailing blanks trimmed."""
        first = edge_token(node, last=False)
        line, column = (first.line, first.column) if first is not None else (1, 1)
        text = self.lines[line - 1] if line <= len(self.lines) else ""
        return self.span_fn(line, column, line, len(text.rstrip()) + 1)

    def name(self, token: Node) -> Name:
        return Name(text=str(token), span=self.span(token))

    # -- statements -----------------------------------------------------------------------

    def modifiers(self, children: list[Node]) -> tuple[Modifier, ...]:
        node = tree(children, "modifiers")
        if node is None:
            return ()
        result = []
        for modifier in kids(node):
            key: Name | None
            value: Expr
            if modifier.data == "modifier_flag":
                key, value = None, self.string(kids(modifier)[0])
            else:
                key, value = self.name(kids(modifier)[0]), self.expr(kids(modifier)[1])
            result.append(Modifier(key=key, value=value, span=self.span(modifier)))
        return tuple(result)

    # -- values ---------------------------------------------------------------------------

    def expr(self, node: Node) -> Expr:
        kind = node.data
        span = self.span(node)
        if kind == "string":
            return self.string(node)
        if kind == "number":
            raw = str(kids(node)[0])
            number: int | float = float(raw) if "." in raw else int(raw)
            return Number(value=number, raw=raw, span=span)
        if kind == "constant":
            word = str(kids(node)[0])
            return Constant(value=None if word == "null" else word == "true", span=span)
        if kind == "reference":
            return self.reference(node)
        if kind == "array":
            return ArrayExpr(items=tuple(self.expr(c) for c in kids(node)), span=span)
        if kind == "object":
            return ObjectExpr(entries=tuple(self.entry(c) for c in kids(node)), span=span)
        if kind == "do_call":
            return self.do_call(node)
        if kind == "apply":
            return self.apply(node)
        if kind == "index":
            target, key = kids(node)
            return Index(target=self.expr(target), key=self.expr(key), span=span)
        if kind == "member":
            target, name = kids(node)
            return Member(target=self.expr(target), name=self.name(name), span=span)
        return self.invocation_head(node, (), span)

    def place(self, node: Node) -> Ref | Index | Member:
        """An assignment target (the grammar admits only names, properties and items)."""
        place = self.expr(node)
        assert isinstance(place, Ref | Index | Member), node.data
        return place

    def entry(self, node: Node) -> Entry:
        key = self.name(kids(node)[0])
        if len(kids(node)) > 1:
            value = self.expr(kids(node)[1])
            return Entry(key=key, value=value, shorthand=False, span=self.span(node))
        ref = Ref(parts=(key.text,), span=key.span, head_span=key.span)
        return Entry(key=key, value=ref, shorthand=True, span=self.span(node))

    def reference(self, node: Node) -> Ref:
        parts = tuple(str(t) for t in kids(node))
        return Ref(parts=parts, span=self.span(node), head_span=self.span(kids(node)[0]))

    def do_call(self, node: Node) -> DoCall:
        return DoCall(
            block=self.name(kids(node)[0]),
            args=self.args(tree(kids(node), "args")),
            span=self.span(node),
        )

    def apply(self, node: Node) -> Apply:
        function, args = kids(node)
        return Apply(
            function=self.name(function),
            args=self.args(args) or (),
            parenthesized=True,
            span=self.span(node),
        )

    def args(self, node: Node | None) -> tuple[Arg, ...] | None:
        """A parenthesized argument list; None when there is none."""
        if node is None:
            return None
        result = []
        for arg in kids(node):
            parts = kids(arg)
            name = self.name(parts[0]) if arg.data == "named_arg" else None
            result.append(Arg(name=name, value=self.expr(parts[-1]), span=self.span(arg)))
        return tuple(result)

    def invocation(self, node: Node) -> Invocation:
        head, *props = kids(node)
        return self.invocation_head(head, self.properties(props), self.span(node))

    def invocation_head(
        self, head: Node, properties: tuple[Property, ...], span: Span
    ) -> Invocation:
        kind = {"call_head": InvocationKind.CALL, "resume_head": InvocationKind.RESUME}.get(
            head.data, InvocationKind.SESSION
        )
        children = kids(head)
        target: Name | None = None
        prompt = label = None
        if head.data == "session_prompt":
            prompt = self.string(children[0])
        elif head.data == "session_named":
            label, target = self.name(children[0]), self.name(children[1])
        elif head.data == "session_task":
            label = self.name(children[0])
        elif is_token(children[0]):
            target = self.name(children[0])
        else:  # `call "std/…"`: the string is the target
            literal = self.string(children[0])
            target = Name(text=literal.value, span=literal.span)
        inputs = tree(children, "with_inputs")
        return Invocation(
            kind=kind,
            target=target,
            target_is_string=head.data == "call_head" and not is_token(children[0]),
            prompt=prompt,
            label=label,
            args=self.args(tree(children, "args")),
            inputs=None if inputs is None else self.expr(kids(inputs)[0]),
            properties=properties,
            span=span,
        )

    def properties(self, nodes: list[Node]) -> tuple[Property, ...]:
        result = []
        for node in nodes:
            key, *rest = kids(node)
            if node.data == "property_group":
                value, children = None, self.properties(rest)
            else:
                value, children = self.expr(rest[0]), ()
            result.append(
                Property(key=self.name(key), value=value, children=children, span=self.span(node))
            )
        return tuple(result)

    def discretion(self, node: Node) -> Discretion:
        token = kids(node)[0]
        raw = str(token)
        style = DiscretionStyle.BARE
        if token.type == "TRIPLE_TEXT":
            style, raw = DiscretionStyle.TRIPLE, raw[3:-3]
        elif token.type == "BOLD_TEXT":
            style, raw = DiscretionStyle.BOLD, raw[2:-2]
        return Discretion(text=" ".join(raw.split()), style=style, span=self.span(token))

    def where(self, token: Node) -> Discretion:
        """The condition of `filter … where <condition>`: the text after `where`, trimmed."""
        raw = str(token)
        text = raw[len("where") :].lstrip()
        start = len(raw) - len(text)
        text = text.rstrip()
        return Discretion(
            text=" ".join(text.split()),
            style=DiscretionStyle.BARE,
            span=self._offset_span(token, start, len(text)),
        )

    # -- strings --------------------------------------------------------------------------

    def string(self, node: Node) -> StringLit:
        token = kids(node)[0] if not is_token(node) else node
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
