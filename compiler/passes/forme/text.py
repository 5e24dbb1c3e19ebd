"""Need-text analysis for Forme: name keys, code spans, negation, fan-in and mentions."""

from __future__ import annotations

import functools
import html
import itertools
import re
from collections.abc import Iterable, Iterator

from ...values import value

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[\s_\-]+")
_CODE = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_BOLD = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)
_WORD = re.compile(r"[A-Za-z0-9]+")
# negation scope: back to the nearest clause boundary, at most this many characters
_NEGATION = re.compile(r"\b(not|never|nor|no|without|except)\b", re.IGNORECASE)
_BOUNDARY = re.compile(r"[.;:()\[\]—–,]")
_NEGATION_WINDOW = 48
_MANY = re.compile(r"\b(every|all|each|both)\b", re.IGNORECASE)
_ATOMIC = re.compile(
    r"\(atomic\)|\bvia\s+`?@atomic`?|`@atomic`|`ATOMIC_FACET`|,\s*atomic\)"
    r"|\batomic\s+(?:facet|truth|whole-truth|view)\b",
    re.IGNORECASE,
)
_CALLER = re.compile(
    r"\b(?:supplied|provided|passed|given)\s+by\s+the\s+caller\b"
    r"|\bcaller[- ](?:provided|supplied|input)\b|\bfrom\s+the\s+caller\b",
    re.IGNORECASE,
)
# `the open-decisions and decision-history facets of …`: facets named without backticks
_FACET_PHRASE = re.compile(
    r"\bthe\s+([\w:@<>-]+(?:\s*(?:,\s*and|,|and)\s+[\w:@<>-]+)*)\s+facets?\b", re.IGNORECASE
)
_FACET_AFTER = re.compile(r"^\*{0,2}\s+facets?\b", re.IGNORECASE)
_TRUTH_AFTER = re.compile(r"^\*{0,2}\s+truth\b", re.IGNORECASE)
_LIST_GLUE = re.compile(r"^\s*(?:,|,?\s*and|&|/|\+)\s*$", re.IGNORECASE)
_REFERENCE_BEFORE = re.compile(
    r"\b(?:from|of|by|on|via|to|in|into)\s+(?:(?:the|a|an|each|every|its|this|all)\s+)?$",
    re.IGNORECASE,
)
_REFERENCE_AFTER = re.compile(
    r"^(?:['’]s\b|\s+(?:gateway|node|nodes|responsibility|truth|truths|world-model|facet"
    r"|facets|feed|ledger|ledgers|output)\b)",
    re.IGNORECASE,
)
MAX_FORM_WORDS = 6
STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "by",
        "for",
        "from",
        "with",
        "via",
        "its",
        "this",
        "that",
        "each",
        "every",
        "all",
        "any",
        "is",
        "are",
        "be",
        "it",
        "as",
        "at",
        "per",
        "current",
        "view",
        "truth",
        "facet",
        "facets",
        "node",
        "nodes",
        "only",
        "when",
        "never",
        "not",
    ]
)


# the text functions below are pure and asked the same questions again and again (every
# node's names and facets at each wiring; the language server wires at each keystroke)
_MEMO = functools.lru_cache(maxsize=1 << 16)


@_MEMO
def key(text: str) -> str:
    """Compare names after normalizing case, CamelCase, `-`/`_`/spaces and a plural `s`."""
    value = html.unescape(text).strip().strip("`*").lstrip("#").strip()
    value = _SEPARATORS.sub("-", _CAMEL.sub("-", value).lower()).strip("-")
    if len(value) > 3 and value.endswith("s") and not value.endswith("ss"):
        value = value[:-1]
    return value


def family(name: str) -> str | None:
    """`email:nl1` → `email` (the facet family); None for a plain facet name."""
    head, sep, _ = name.partition(":")
    return key(head) if sep and head else None


def is_family_pattern(name: str) -> bool:
    """`email:<id>` names a whole facet family rather than one facet."""
    return bool(re.fullmatch(r"[^:]+:<[^>]*>", name.strip()))


@_MEMO
def words(text: str) -> tuple[str, ...]:
    return tuple(w.lower() for w in _WORD.findall(html.unescape(text)))


@value
class Token:
    """A code span or bold run of a need, with its offsets in the analyzed text."""

    text: str
    start: int
    end: int
    negated: bool


@value
class NeedText:
    """One need's text, analyzed once for every rung of the ladder."""

    text: str  # HTML entities unescaped
    body_start: int  # where the text after the need's leading name begins
    code: tuple[Token, ...]
    bold: tuple[Token, ...]
    masked: str  # code spans blanked out, for mentions written in words
    many: bool
    atomic: bool
    caller: bool

    def body_code(self) -> Iterator[Token]:
        return (t for t in self.code if t.start >= self.body_start and not t.negated)

    def followed_by_facet(self, token: Token) -> bool:
        return bool(_FACET_AFTER.match(self.text[token.end : token.end + 12]))

    def truth_refs(self) -> list[str]:
        """Code spans written as a named truth: the `x` truth."""
        return [
            t.text for t in self.body_code() if _TRUTH_AFTER.match(self.text[t.end : t.end + 12])
        ]

    def facet_refs(self) -> list[Token]:
        """Code spans written as facets: `x` facet, and `x`, `y` and `z` facets."""
        refs: list[Token] = []
        tokens = [t for t in self.code if not t.negated]
        for i in reversed(range(len(tokens))):
            token = tokens[i]
            glued = bool(refs) and bool(_LIST_GLUE.match(self.text[token.end : refs[-1].start]))
            if self.followed_by_facet(token) or glued:
                refs.append(token)
        return refs[::-1]

    def listed(self, tokens: list[Token]) -> bool:
        """Whether these code spans form one enumeration (`a`, `b` and `c`)."""
        ordered = sorted(tokens, key=lambda t: t.start)
        return len(ordered) > 1 and all(
            _LIST_GLUE.match(self.text[a.end : b.start]) for a, b in itertools.pairwise(ordered)
        )

    def facet_words(self) -> Iterator[str]:
        """Facet names written in a `the x and y facets` phrase, outside negation."""
        for match in _FACET_PHRASE.finditer(self.masked):
            if negated(self.masked, match.start()):
                continue
            for part in re.split(r"\s*(?:,\s*and|,|\band\b)\s*", match.group(1)):
                if part.strip():
                    yield part.strip()


@_MEMO
def analyze(text: str, name: str | None) -> NeedText:
    text = html.unescape(text)
    body_start = _leading_name_end(text, name)
    code = tuple(
        Token(m.group(2).strip(), m.start(), m.end(), negated(text, m.start()))
        for m in _CODE.finditer(text)
    )
    masked = _CODE.sub(lambda m: " " * len(m.group(0)), text)
    bold = tuple(
        Token(m.group(1).strip(" `"), m.start(), m.end(), negated(text, m.start()))
        for m in _BOLD.finditer(text)
    )
    return NeedText(
        text=text,
        body_start=body_start,
        code=code,
        bold=bold,
        masked=masked,
        many=bool(_MANY.search(text)),
        atomic=any(not negated(text, m.start()) for m in _ATOMIC.finditer(text)),
        caller=any(not negated(text, m.start()) for m in _CALLER.finditer(text)),
    )


def negated(text: str, position: int) -> bool:
    """Whether `position` sits under a negation earlier in the same clause."""
    window = text[max(0, position - _NEGATION_WINDOW) : position]
    cut = max((m.end() for m in _BOUNDARY.finditer(window)), default=0)
    return bool(_NEGATION.search(window[cut:]))


def _leading_name_end(text: str, name: str | None) -> int:
    if not name:
        return 0
    stripped = text.lstrip()
    offset = len(text) - len(stripped)
    for form in (f"`{name}`", name):
        if stripped.startswith(form):
            return offset + len(form)
    return 0


@value
class Mention:
    """A producer named in words in a referential context (`from the inbox gateway`)."""

    node: str
    evidence: str


class WordIndex:
    """Surface forms written in words (names, titles) → nodes, for the mentioned rung."""

    def __init__(
        self, forms: Iterable[tuple[str, tuple[str, ...]]], traced: object | None = None
    ) -> None:
        found: dict[tuple[str, ...], set[str]] = {}
        longest: dict[str, int] = {}  # first word → longest form starting with it
        for node, form in forms:
            if form and len(form) <= MAX_FORM_WORDS:
                found.setdefault(form, set()).add(node)
                longest[form[0]] = max(longest.get(form[0], 0), len(form))
        self.forms: dict[tuple[str, ...], set[str]] = found
        self.longest: dict[str, int] = longest
        if traced is not None:  # the index's tracing tables (compiler/passes/forme/index.py)
            from .index import Table

            self.forms = Table("forms", found, None)
            self.longest = Table("longest", longest, None)

    def mentions(self, need: NeedText) -> list[Mention]:
        text = need.masked
        tokens = list(_WORD.finditer(text))
        lowered = [t.group(0).lower() for t in tokens]
        found: list[Mention] = []
        for i, first in enumerate(lowered):
            longest = self.longest.get(first, 0)
            for length in range(min(longest, len(tokens) - i), 0, -1):
                nodes = self.forms.get(tuple(lowered[i : i + length]))
                if not nodes:
                    continue
                span = tokens[i : i + length]
                if not _joined(text, span):
                    continue
                start, end = span[0].start(), span[-1].end()
                if _referential(text, start, end) and not negated(text, start):
                    phrase = _phrase(text, start, end)
                    found.extend(Mention(node, phrase) for node in sorted(nodes))
                break
        return found


def _joined(text: str, span: list[re.Match[str]]) -> bool:
    """Words of one surface form: separated by one space, `-` or `_`, not glued outside."""
    for a, b in itertools.pairwise(span):
        if text[a.end() : b.start()] not in (" ", "-", "_"):
            return False
    start, end = span[0].start(), span[-1].end()
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    return before not in "-_" and after not in "-_"


def _referential(text: str, start: int, end: int) -> bool:
    return bool(
        _REFERENCE_BEFORE.search(text[max(0, start - 24) : start])
        or _REFERENCE_AFTER.match(text[end : end + 24])
    )


def _phrase(text: str, start: int, end: int) -> str:
    before = _REFERENCE_BEFORE.search(text[max(0, start - 24) : start])
    after = _REFERENCE_AFTER.match(text[end : end + 24])
    left = start - len(before.group(0)) if before else start
    right = end + len(after.group(0)) if after else end
    return " ".join(text[left:right].split())
