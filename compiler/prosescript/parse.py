"""ProseScript fences → typed statements; the only module that imports lark."""

from __future__ import annotations

import functools
import hashlib
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import lark
from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.indenter import Indenter

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..ir import Fence, Span
from . import build
from .ir import Script

if TYPE_CHECKING:
    from .errors import ErrorSite

GRAMMAR = Path(__file__).with_name("grammar.lark")
# The parse table, generated from GRAMMAR by `make grammar` and shipped beside it, so a
# process loads it in ~15 ms instead of building the LALR tables (~250 ms) on every run.
TABLE = Path(__file__).with_name("grammar.table")
_TABLE_MAGIC = b"prosec-prosescript-table "


class LayoutError(Exception):
    """A line whose indentation matches no enclosing block, or that indents with tabs."""

    def __init__(self, message: str, token: Token, column: int) -> None:
        super().__init__(message)
        self.line = int(token.end_line or 1)  # the line after the newline: the indented one
        self.column = column


# keywords that keep their meaning right before `(` (`loop(max: 3)`, `if(x):`): the lexer
# reads a name followed by `(` as a function name first, and the post-lexer gives these
# back their keyword terminal (lark names a keyword's terminal by its upper-case text)
KEYWORDS = frozenset(
    {
        *("agent", "append", "block", "break", "call", "catch", "choice", "const", "continue"),
        *("do", "elif", "else", "false", "finally", "for", "if", "let", "loop", "null"),
        *("option", "output", "parallel", "record", "repeat", "resume", "return", "session"),
        *("throw", "true", "try", "until", "use", "while"),
    }
)


def _keywords_back(stream: Iterator[Token]) -> Iterator[Token]:
    for token in stream:
        if token.type == "FUNC_NAME" and token in KEYWORDS:
            yield Token.new_borrow_pos(token.upper(), str(token), token)
        else:
            yield token


class _Indenter(Indenter):
    """Python-style INDENT/DEDENT, with positioned errors instead of lark's DedentError."""

    NL_type = "_NL"
    OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]  # noqa: RUF012 - lark's class protocol
    CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]  # noqa: RUF012
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        return super().process(_keywords_back(stream))  # type: ignore[no-untyped-call,no-any-return]

    def handle_NL(self, token: Token) -> Iterator[Token]:
        if self.paren_level > 0:
            return
        yield token
        indent_str = token.rsplit("\n", 1)[1]
        if "\t" in indent_str:
            raise LayoutError(
                "tabs are not allowed in indentation; indent with spaces",
                token,
                indent_str.index("\t") + 1,
            )
        indent = len(indent_str)
        if indent > self.indent_level[-1]:
            self.indent_level.append(indent)
            yield Token.new_borrow_pos(self.INDENT_type, indent_str, token)
            return
        while indent < self.indent_level[-1]:
            self.indent_level.pop()
            yield Token.new_borrow_pos(self.DEDENT_type, indent_str, token)
        if indent != self.indent_level[-1]:
            levels = ", ".join(str(level) for level in self.indent_level)
            raise LayoutError(
                f"this line is indented by {indent} space{'s' if indent != 1 else ''}, which "
                f"matches no enclosing block (open blocks are indented by {levels})",
                token,
                indent + 1,
            )


# Every token stays in the tree: the builder computes spans from them, which is ~40%
# faster than lark's position propagation and child filtering.
_OPTIONS: dict[str, Any] = {
    "parser": "lalr",
    "lexer": "contextual",
    "maybe_placeholders": False,
    "keep_all_tokens": True,
}


def table_key() -> str:
    """What the shipped table was built from: grammar text, lark version, options, and
    where the post-lexer lives (the table pickles a reference to its class)."""
    grammar = GRAMMAR.read_text(encoding="utf-8")
    options = ",".join(
        f"{k}={v if isinstance(v, str | bool) else 'fn'}" for k, v in _OPTIONS.items()
    )
    postlex = f"{_Indenter.__module__}.{_Indenter.__qualname__}"
    seed = f"{grammar}\0{lark.__version__}\0{options}\0{postlex}"
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


def build_parser() -> Lark:
    """Build the LALR parser from the grammar (slow: only when the table is stale)."""
    return Lark(GRAMMAR.read_text(encoding="utf-8"), postlex=_Indenter(), **_OPTIONS)


def write_table(path: Path = TABLE) -> None:
    """Serialize a freshly built parser with its key (the `make grammar` target)."""
    buffer = io.BytesIO()
    build_parser().save(buffer)
    path.write_bytes(_TABLE_MAGIC + table_key().encode("ascii") + b"\n" + buffer.getvalue())


def read_table(path: Path = TABLE) -> Lark | None:
    """The shipped parser when its key matches this grammar and lark, else None."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    header, _, payload = data.partition(b"\n")
    if header != _TABLE_MAGIC + table_key().encode("ascii"):
        return None
    return Lark.load(io.BytesIO(payload))


@functools.cache
def parser() -> Lark:
    """The process-wide parser, built once on first use."""
    return read_table() or build_parser()


# -- entry ------------------------------------------------------------------------------------


class _Mapper:
    """Positions in the dedented fence text → 1-based spans in the source file."""

    def __init__(self, fence: Fence, path: str, dedent: int, text: str) -> None:
        self.path = path
        self.line_offset = fence.content_line - 1
        self.column_offset = fence.span.column - 1 + dedent
        self.widths = [len(line) for line in text.split("\n")]

    def _clamp(self, line: int, column: int) -> tuple[int, int]:
        """Keep a position on the fence's real text (lark reports end of input past it)."""
        last = max(len(self.widths) - (1 if len(self.widths) > 1 and not self.widths[-1] else 0), 1)
        line = min(max(line, 1), last)
        return line, min(max(column, 1), self.widths[line - 1] + 1)

    def span(self, line: int, column: int, end_line: int, end_column: int) -> Span:
        line, column = self._clamp(line, column)
        end_line, end_column = self._clamp(max(end_line, line), end_column)
        if end_line == line:
            end_column = max(end_column, column)
        if (end_line, end_column) == (line, column):
            # an error at the end of a line: span the line break when one follows in the
            # file, else the line's last character, so the span is never empty
            if line < len(self.widths):
                end_line, end_column = line + 1, 1
            elif column > 1:
                column -= 1
        return Span(
            path=self.path,
            line=line + self.line_offset,
            column=column + self.column_offset,
            end_line=end_line + self.line_offset,
            end_column=end_column + self.column_offset,
        )


_LEADING = re.compile(r"^[ \t]*")


def _dedent(text: str) -> tuple[str, int]:
    """Remove the common leading spaces of non-blank lines (a fence inside a list item)."""
    lines = text.split("\n")
    widths = [len(line) - len(line.lstrip(" ")) for line in lines if line.strip()]
    common = min(widths, default=0)
    if not common:
        return text, 0
    return "\n".join(line[common:] for line in lines), common


def parse_script(fence: Fence, path: str) -> tuple[Script | None, list[Diagnostic]]:
    """Parse one ```prose fence; a syntax error is a `prosescript_syntax` diagnostic."""
    text, dedent = _dedent(fence.content.replace("\r\n", "\n").replace("\r", "\n"))
    mapper = _Mapper(fence, path, dedent, text)
    if not text.endswith("\n"):
        text += "\n"
    try:
        tree = parser().parse(text)
        return build.build(tree, mapper.span, text), []
    except LayoutError as exc:
        span = mapper.span(exc.line, exc.column, exc.line, exc.column + 1)
        return None, [diag.make("prosescript_syntax", str(exc), span)]
    except UnexpectedInput as exc:
        from .errors import describe_error  # only a failed parse needs the wording

        message, (line, column, end_line, end_column) = describe_error(
            _error_site(exc), text, terminal_patterns()
        )
        span = mapper.span(line, column, end_line, end_column)
        return None, [diag.make("prosescript_syntax", message, span)]
    except RecursionError:
        span = mapper.span(1, 1, 1, 2)
        return None, [diag.make("prosescript_syntax", "the script nests too deeply", span)]


@functools.cache
def terminal_patterns() -> dict[str, tuple[bool, str]]:
    """Terminal name → (is a literal string, its text or regex), for error messages."""
    return {t.name: (t.pattern.type == "str", t.pattern.value) for t in parser().terminals}


def _error_site(exc: UnexpectedInput) -> ErrorSite:
    """Where lark stopped, what it found and what it would have accepted there."""
    from .errors import ErrorSite

    if isinstance(exc, UnexpectedToken):
        token = exc.token
        return ErrorSite(
            token_type=str(token.type),
            token_text=str(token),
            line=int(token.line or 0),
            column=int(token.column or 0),
            end_line=int(token.end_line or 0),
            end_column=int(token.end_column or 0),
            expected=frozenset(exc.accepts or exc.expected),
        )
    if isinstance(exc, UnexpectedCharacters):
        return ErrorSite(
            token_type="",
            token_text=exc.char,
            line=exc.line,
            column=exc.column,
            end_line=exc.line,
            end_column=exc.column + 1,
            expected=frozenset(exc.allowed or ()),
        )
    expected = frozenset(getattr(exc, "expected", ()) or ())
    return ErrorSite(
        token_type="$END",
        token_text="",
        line=0,
        column=0,
        end_line=0,
        end_column=0,
        expected=expected,
    )
