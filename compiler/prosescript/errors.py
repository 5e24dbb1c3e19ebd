"""ProseScript syntax errors in words: what was found, what was expected, and a hint."""

from __future__ import annotations

import re
from dataclasses import dataclass

# terminals that are regexes, described for people rather than by their grammar names
_NAMED = {
    "NAME": "a name",
    "FUNC_NAME": "a name",
    "FILTER": "`filter`",
    "WHERE_TEXT": "`where` and a condition",
    "NUMBER": "a number",
    "STRING": "a string",
    "TRIPLE_STRING": "a string",
    "PATH_TARGET": "a path",
    "BARE_TEXT": "a condition",
    "LOOP_TEXT": "a condition",
    "BOLD_TEXT": "a condition",
    "TRIPLE_TEXT": "a condition",
    "PIPE_NAME": "`map`, `filter` or `pmap`",
    "_NL": "end of line",
    "_INDENT": "an indented block",
    "_DEDENT": "end of block",
    "$END": "end of script",
    "LET": "`let`",
    "CONST": "`const`",
    "TRUE": "`true`",
    "FALSE": "`false`",
    "NULL": "`null`",
}
_TEXT_TOKENS = frozenset({"BARE_TEXT", "LOOP_TEXT", "BOLD_TEXT", "TRIPLE_TEXT"})
_STATEMENT_WORDS = frozenset(
    [
        "let",
        "const",
        "use",
        "agent",
        "block",
        "return",
        "throw",
        "call",
        "session",
        "resume",
        "do",
        "parallel",
        "repeat",
        "for",
        "loop",
        "if",
        "choice",
        "try",
        "input",
        "output",
        "record",
        "append",
        "break",
        "continue",
        "write_world_model",
    ]
)
_VALUE_TERMINALS = frozenset({"STRING", "TRIPLE_STRING", "NUMBER", "TRUE", "FALSE", "NULL"})
_LEXEME = re.compile(r'[A-Za-z_][A-Za-z0-9_-]*|-?[0-9]+(?:\.[0-9]+)?|"""|\*\*\*|\*\*|\S')
_FILTER_WITHOUT_CONDITION = re.compile(r"(?:^|[=\s])filter\s+\S.*\swhere\s*(?:#.*)?$")
_SPACED_NAME_BEFORE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\s+$")
_FIRST_WORD = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_-]*)")
_MAX_LISTED = 7


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorSite:
    """Where the parser stopped (1-based, in the dedented fence text) and what it saw."""

    token_type: str  # lark terminal name; "" for a character no terminal matches
    token_text: str
    line: int  # 0 when unknown (end of input)
    column: int
    end_line: int
    end_column: int
    expected: frozenset[str]


Position = tuple[int, int, int, int]


def describe_error(
    site: ErrorSite, text: str, terminals: dict[str, tuple[bool, str]]
) -> tuple[str, Position]:
    """A one-line message and the span (line, column, end line, end column) to report."""
    lines = text.split("\n")
    position = _position(site, lines)
    found = _found(site)
    expected = _expected(site.expected, terminals)
    message = f"unexpected {found}"
    if expected:
        message += f"; expected {expected}"
    hint = _hint(site, lines, found)
    if hint:
        message += f". {hint[0].upper()}{hint[1:]}"
    return message, position


def _position(site: ErrorSite, lines: list[str]) -> Position:
    if site.token_type == "$END" or site.line <= 0:
        last = max((i for i, line in enumerate(lines, 1) if line.strip()), default=1)
        width = len(lines[last - 1]) if last <= len(lines) else 0
        return last, width + 1, last, width + 2
    if site.token_type in ("_INDENT", "_DEDENT") and site.end_line > 0:
        line, column = site.end_line, site.end_column
        word = _LEXEME.match(_line(lines, line), column - 1)
        return line, column, line, column + (len(word.group(0)) if word else 1)
    if site.token_type == "_NL":
        return site.line, site.column, site.line, site.column + 1
    if site.token_type in _TEXT_TOKENS or not site.token_type:
        word = _LEXEME.match(_line(lines, site.line), site.column - 1)
        width = len(word.group(0)) if word else 1
        return site.line, site.column, site.line, site.column + width
    end_line, end_column = site.end_line, site.end_column
    if end_line != site.line or end_column <= site.column:  # a multi-line token: first line
        end_line, end_column = site.line, len(_line(lines, site.line)) + 1
    return site.line, site.column, end_line, max(end_column, site.column + 1)


def _line(lines: list[str], line: int) -> str:
    return lines[line - 1] if 0 < line <= len(lines) else ""


def _found(site: ErrorSite) -> str:
    kind = site.token_type
    if kind == "_INDENT":
        return "indentation"
    if kind in ("$END", "_NL", "_DEDENT"):
        return _NAMED[kind]
    if not kind and site.token_text == '"':
        return "an unterminated string"
    if kind in ("STRING", "TRIPLE_STRING"):
        return "a string"
    word = _LEXEME.match(site.token_text)
    shown = word.group(0) if word else site.token_text[:1]
    return f"`{shown}`" if shown.strip() else "whitespace"


def _expected(names: frozenset[str], terminals: dict[str, tuple[bool, str]]) -> str:
    statement_words = {n for n in names if terminals.get(n, (False, ""))[1] in _STATEMENT_WORDS}
    phrases: list[str] = []
    if len(statement_words) >= 6:  # the start of a statement accepts every keyword
        phrases.append("a statement")
        names = names - statement_words - {"NAME"}
    if len(names & _VALUE_TERMINALS) >= 4:
        phrases.append("a value")
        names = names - _VALUE_TERMINALS - {"NAME", "LSQB", "LBRACE"}
    for name in sorted(names):
        if name in _NAMED:
            phrase = _NAMED[name]
        elif name in terminals and terminals[name][0]:
            phrase = f"`{terminals[name][1]}`"
        else:
            continue  # an internal terminal (comments, layout) says nothing to a reader
        if phrase not in phrases:
            phrases.append(phrase)
    phrases.sort(key=lambda p: (not p.startswith("`"), p))
    if len(phrases) > _MAX_LISTED:
        phrases = [*phrases[:_MAX_LISTED], "…"]
    if len(phrases) <= 1:
        return "".join(phrases)
    return ", ".join(phrases[:-1]) + " or " + phrases[-1]


def _hint(site: ErrorSite, lines: list[str], found: str) -> str:
    line = _line(lines, site.line)
    before = line[: max(site.column - 1, 0)]
    first = _FIRST_WORD.match(line)
    head = first.group(1) if first else ""
    if found == "`(`" and _SPACED_NAME_BEFORE.search(before) and "LPAR" not in site.expected:
        return "a call's `(` follows its name directly: write `name(…)` without the space"
    if _FILTER_WITHOUT_CONDITION.search(line):
        return "`filter … where` needs a condition after `where`"
    if found == "an unterminated string":
        return 'a "…" string must close on the same line; use """…""" for text over several lines'
    if head in ("else", "elif") and found != f"`{head}`":
        return f"`{head}` must follow an `if` block at the same indentation"
    if head in ("catch", "finally") and found != f"`{head}`":
        return f"`{head}` must follow a `try` block at the same indentation"
    if site.expected and site.expected <= {"EQUAL", "DOT", "LSQB"} and head not in _STATEMENT_WORDS:
        return (
            f"`{head}` is not a ProseScript statement; a line that starts with a name "
            "assigns to it (`name = value`)"
        )
    if found in ("`else`", "`elif`"):
        return f"{found} must follow an `if` block at the same indentation"
    if found in ("`catch`", "`finally`"):
        return f"{found} must follow a `try` block at the same indentation"
    if site.token_type == "_INDENT":
        return "only a line ending in `:` (or a call with inputs) opens an indented block"
    if "_INDENT" in site.expected:
        return "a block header ending in `:` needs an indented body on the next line"
    return ""
