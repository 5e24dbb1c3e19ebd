"""The shapes of contract items and keyword clauses, read from one inline's text."""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it.token import Token

from ..ir import Clause, ClauseKind, Item, ItemStyle, Span

# sections whose prose sentences may carry `Postcondition:` / `Material:` clauses
CLAUSE_SECTIONS = frozenset({"maintains", "criteria", "postconditions"})

_DASHES = ("—", "–", "--", "-")
_BARE_NAME = re.compile(r"^([A-Za-z_@][\w@.\-/\[\]<>]*)\s*:(?:\s+|$)(.*)$", re.DOTALL)
_BOLD_NAME = re.compile(r"^\*\*([^*]+?)\*\*\s*:(?:\s+|$)(.*)$", re.DOTALL)
_CLAUSE = re.compile(
    r"^(immaterial|material|postconditions?|freshness)\b([^:]{0,40}):\s*(.*)$",
    re.IGNORECASE | re.DOTALL,
)
_PSEUDO_HEADING = re.compile(r"^(?:\*\*|__)([^*_].*?)(?:\*\*|__)\s*:?$")
_CLAUSE_HEADING = re.compile(
    r"^(immaterial|material|postconditions?|freshness)(?: fields?| rules?)?$", re.IGNORECASE
)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*_(])")
_RUN_TYPE = re.compile(r"^(run\[\]|run)(?=$|[\s—–,:;.-])")
_NONE_MARKERS = frozenset({"(none)", "none", "none.", "(none.)", "n/a", "—", "-"})


@dataclass(frozen=True, slots=True)
class Shape:
    name: str | None
    description: str
    style: ItemStyle


def classify(source: str, children: list[Token]) -> Shape:
    """Decide how a bullet was written from its raw inline source and its inline tokens."""
    text = " ".join(source.split())
    first = next((c for c in children if c.type != "text" or c.content.strip()), None)
    if first is not None and first.type == "code_inline" and text.startswith("`"):
        name = first.content.strip()
        rest = _after_code_span(text)
        if rest.startswith(":"):
            return Shape(name, rest[1:].strip(), ItemStyle.BACKTICK_COLON)
        for dash in _DASHES:
            if rest.startswith(dash):
                return Shape(name, rest[len(dash) :].strip(), ItemStyle.BACKTICK_DASH)
        if not rest:
            return Shape(name, "", ItemStyle.BACKTICK_ONLY)
        return Shape(name, rest, ItemStyle.SENTENCE)
    bold = _BOLD_NAME.match(text)
    if bold:
        return Shape(bold.group(1).strip(), bold.group(2).strip(), ItemStyle.BARE_COLON)
    bare = _BARE_NAME.match(text)
    if bare:
        return Shape(bare.group(1), bare.group(2).strip(), ItemStyle.BARE_COLON)
    return Shape(None, text, ItemStyle.SENTENCE)


def _after_code_span(text: str) -> str:
    """The text after a leading code span (any backtick-run length)."""
    run = len(text) - len(text.lstrip("`"))
    close = text.find("`" * run, run)
    return text[close + run :].strip() if close >= 0 else ""


def bullet_clause(item: Item) -> Clause | None:
    """`- immaterial everywhere: …`, `- postcondition: …` are clauses, not items."""
    if item.style not in (ItemStyle.BARE_COLON, ItemStyle.SENTENCE):
        return None
    match = _CLAUSE.match(item.text)
    if match is None:
        return None
    return Clause(
        kind=_clause_kind(match.group(1)),
        text=flatten(item, match.group(3).strip()),
        span=item.span,
        qualifier=" ".join(match.group(2).split()),
        bullet=True,
    )


def sentence_clauses(text: str, span: Span) -> list[Clause]:
    """Clauses written as sentences inside a paragraph of `### Maintains` or a facet."""
    clauses = []
    for sentence in _SENTENCE_SPLIT.split(text):
        sentence = sentence.strip()
        match = _CLAUSE.match(sentence)
        if match is not None:
            clauses.append(
                Clause(
                    kind=_clause_kind(match.group(1)),
                    text=match.group(3).strip(),
                    span=span,
                    qualifier=" ".join(match.group(2).split()),
                    bullet=False,
                )
            )
        elif re.search(r"\bimmaterial\b", sentence, re.IGNORECASE):
            qualifier = "everywhere" if re.search(r"\beverywhere\b", sentence, re.I) else ""
            clauses.append(
                Clause(
                    kind=ClauseKind.IMMATERIAL,
                    text=sentence,
                    span=span,
                    qualifier=qualifier,
                    bullet=False,
                )
            )
    return clauses


def pseudo_heading(text: str) -> str | None:
    """`**Register fields**` or `**Postconditions**:` alone in a paragraph → its title."""
    match = _PSEUDO_HEADING.match(text.strip())
    if match is None or "**" in match.group(1):
        return None
    return match.group(1).strip().rstrip(":").strip()


def clause_heading(title: str) -> ClauseKind | None:
    """The clause kind a pseudo-heading announces for the bullets under it, if any."""
    match = _CLAUSE_HEADING.match(title.strip())
    return _clause_kind(match.group(1)) if match else None


def _clause_kind(word: str) -> ClauseKind:
    word = word.lower()
    if word.startswith("postcondition"):
        return ClauseKind.POSTCONDITION
    return ClauseKind(word)


def flatten(item: Item, head: str | None = None) -> str:
    """An item's text with its nested bullets folded in, one space apart."""
    parts = [item.text if head is None else head]
    parts.extend(flatten(child) for child in item.children)
    return " ".join(p for p in parts if p)


def run_type(description: str) -> str | None:
    """`run — a completed run` / `run[] — …` mark run-typed caller inputs."""
    match = _RUN_TYPE.match(description.strip())
    return match.group(1) if match else None


def is_none_marker(text: str) -> bool:
    return text.strip().lower() in _NONE_MARKERS
