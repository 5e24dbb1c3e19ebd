"""Lower one `### Expects` / `### Expects Not` item to a machine check where its text allows.

Pure: text in, a `Check` out. What no rule below reads is a `judge` check (the judge
command of `[test.judge]` decides it, and its verdict is recorded). The operations:

| text (after the item's `name`) | op |
|---|---|
| (nothing), `exists`, `is present`, `is published`, `is set` | `present` |
| `is empty` | `count` 0 |
| `has N items`, `has at least N …`, `has at most N …`, `has no …` | `count` |
| `is V`, `equals V`, `is exactly V` (V a JSON literal or backticked) | `equals` |
| `is one of V, V…` | `one_of` |
| `contains V`, `includes V`, `mentions V` | `contains` |
| `lists V before V`, `has V before V` | `before` |
| `every item has `k`` (and `` `k2` ``…), `each item has …` | `every_has` |
| `matches the schema {…}`, `has the shape {…}` | `schema` |
| `satisfies its postconditions`, `satisfies postcondition `pc-…`` | `postcondition` |
| a node of the test: `renders`, `is rendered`, `wakes` / `is skipped`, `stays asleep`, `does not render` | `rendered` |
| `__error.md` (and `exists`) | `error_file` |
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from prosec.runtime.canonical import loads_strict

from ..ir import Item, Span
from ..values import value

__all__ = ["Check", "lower_item"]

_NUMBER_WORDS = {
    "no": 0,
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_N = r"(?P<n>\d+|" + "|".join(_NUMBER_WORDS) + r")"
_COUNT = re.compile(
    r"^(?:has|holds|lists|contains)\s+(?P<bound>exactly\s+|at\s+least\s+|at\s+most\s+)?"
    + _N
    + r"(?:\s+or\s+(?P<more>more|fewer))?(?:\s+\S+)?$",
    re.IGNORECASE,
)
_EVERY = re.compile(r"^(?:every|each)\s+(?:item|entry|element|one)\s+has\s+(?P<rest>.+)$", re.I)
_ONE_OF = re.compile(r"^is\s+one\s+of\s+(?P<rest>.+)$", re.IGNORECASE)
_EQUALS = re.compile(r"^(?:is|equals|is\s+exactly|is\s+equal\s+to)\s+(?P<rest>.+)$", re.I)
_CONTAINS = re.compile(r"^(?:contains|includes|mentions|lists)\s+(?P<rest>.+)$", re.IGNORECASE)
_BEFORE = re.compile(
    r"^(?:lists|has|puts|orders)\s+(?P<a>`[^`]+`|\"[^\"]*\")\s+before\s+(?P<b>`[^`]+`|\"[^\"]*\")$",
    re.IGNORECASE,
)
_SCHEMA = re.compile(
    r"^(?:matches\s+(?:the\s+)?(?:json\s+)?schema|has\s+the\s+shape)\s*:?\s*(?P<rest>\{.*\})$",
    re.IGNORECASE | re.DOTALL,
)
_POSTCONDITION = re.compile(
    r"^(?:satisfies|holds|meets)\s+(?:its\s+|all\s+its\s+|the\s+)?postconditions?"
    r"(?:\s+`(?P<id>[^`]+)`)?$",
    re.IGNORECASE,
)
_PRESENT = re.compile(r"^(?:exists|is\s+present|is\s+published|is\s+set|is\s+there)?$", re.I)
_RENDERED = re.compile(r"^(?:renders|re-renders|is\s+rendered|is\s+re-rendered|wakes)\b", re.I)
_ASLEEP = re.compile(
    r"^(?:is\s+skipped|skips|stays\s+asleep|sleeps|does\s+not\s+render|is\s+not\s+rendered)\b",
    re.IGNORECASE,
)
_BACKTICKED = re.compile(r"`([^`]+)`")


@value(kw_only=True)
class Check:
    """One lowered assertion. `argument` is canonical JSON text (a value keeps the check
    hashable); `negated` for an Expects Not item."""

    index: int
    text: str
    target: str
    op: str
    argument: str = "null"
    negated: bool = False  # the check's sense is flipped (Expects Not, `stays asleep`)
    negative: bool = False  # written under `### Expects Not`
    span: Span

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "text": self.text,
            "target": self.target,
            "op": self.op,
            "argument": json.loads(self.argument),
            "negated": self.negated,
            "negative": self.negative,
            "line": self.span.line,
            "lowering": self.describe(),
        }

    @property
    def lowered(self) -> bool:
        return self.op != "judge"

    def describe(self) -> str:
        """What the check does, in one line (`prosec explain` on a test)."""
        what = _describe(self.op, self.target, json.loads(self.argument), self.text)
        return f"not ({what})" if self.negated else what


def _describe(op: str, target_name: str, arg: Any, text: str) -> str:
    target = f"`{target_name}`" if target_name else "the whole truth"
    if op == "present":
        return f"{target} is published"
    if op == "equals":
        return f"{target} == {json.dumps(arg, ensure_ascii=False)}"
    if op == "one_of":
        return f"{target} in {json.dumps(arg, ensure_ascii=False)}"
    if op == "contains":
        return f"{json.dumps(arg, ensure_ascii=False)} in {target}"
    if op == "before":
        first, second = (json.dumps(a, ensure_ascii=False) for a in arg)
        return f"in {target}, {first} comes before {second}"
    if op == "every_has":
        return f"every item of {target} has {', '.join(arg)}"
    if op == "schema":
        return f"{target} matches the JSON Schema {json.dumps(arg, sort_keys=True)}"
    if op == "postcondition":
        which = "s" if arg is None else f" {arg}"
        return f"the subject's postcondition{which} hold on its truth"
    if op == "rendered":
        return f"{target} rendered in the last run"
    if op == "error_file":
        return f"the subject's workspace has {target}"
    if op == "count":
        low, high = arg
        if low == high:
            return f"len({target}) == {low}"
        if high is None:
            return f"len({target}) >= {low}"
        return f"{low} <= len({target}) <= {high}"
    return f"the judge decides, over {target}: {text}"


def literal(text: str) -> Any:
    """A value as written: backticked or not, JSON when it parses, else the text itself."""
    text = text.strip().rstrip(".").strip()
    match = re.fullmatch(r"`([^`]*)`", text)
    if match:
        text = match.group(1)
    try:  # strict: no NaN or infinities, bounded depth (a hostile file never crashes)
        return loads_strict(text)
    except (ValueError, RecursionError):
        return text


def _values(text: str) -> list[Any]:
    quoted = _BACKTICKED.findall(text) or re.findall(r'"([^"]*)"', text)
    if quoted:
        return [literal(f"`{q}`") for q in quoted]
    return [literal(part) for part in re.split(r",\s*|\s+or\s+", text) if part.strip()]


def _count(match: re.Match[str]) -> tuple[int, int | None]:
    raw = match.group("n").lower()
    n = int(raw) if raw.isdigit() else _NUMBER_WORDS[raw]
    bound = (match.group("bound") or "").lower().split()
    more = (match.group("more") or "").lower()
    if bound[:2] == ["at", "least"] or more == "more":
        return n, None
    if bound[:2] == ["at", "most"] or more == "fewer":
        return 0, n
    return n, n


def lower_item(item: Item, index: int, *, negated: bool, nodes: Collection[str]) -> Check:
    """The check an Expects (or, `negated`, Expects Not) item lowers to."""
    name = item.name
    text = " ".join(item.description.split()).rstrip(".").strip()

    def make(target: str, op: str, argument: Any = None) -> Check:
        return Check(
            index=index,
            text=item.text,
            target=target,
            op=op,
            argument=json.dumps(argument, sort_keys=True, ensure_ascii=False),
            negated=negated,
            negative=negated,
            span=item.span,
        )

    if name is None:
        return make("", "judge")
    if name.endswith(".md") and _PRESENT.match(text):
        return make(name, "error_file")
    if name in nodes and (_RENDERED.match(text) or _ASLEEP.match(text)):
        return make(name, "rendered") if _RENDERED.match(text) else _flip(make(name, "rendered"))
    if _PRESENT.match(text):
        return make(name, "present")
    if text.lower() == "is empty":
        return make(name, "count", [0, 0])
    match = _COUNT.match(text)
    if match:
        return make(name, "count", list(_count(match)))
    match = _EVERY.match(text)
    if match:
        keys = _BACKTICKED.findall(match.group("rest"))
        if keys:
            return make(name, "every_has", keys)
    match = _ONE_OF.match(text)
    if match:
        return make(name, "one_of", _values(match.group("rest")))
    match = _BEFORE.match(text)
    if match:
        return make(name, "before", [literal(match.group("a")), literal(match.group("b"))])
    match = _SCHEMA.match(text)
    if match:
        try:
            schema = loads_strict(match.group("rest"))
        except (ValueError, RecursionError):
            schema = None
        if isinstance(schema, dict):
            return make(name, "schema", schema)
    match = _POSTCONDITION.match(text)
    if match:
        return make(name, "postcondition", match.group("id"))
    match = _CONTAINS.match(text)
    if match and _single_value(match.group("rest")):
        return make(name, "contains", literal(match.group("rest")))
    match = _EQUALS.match(text)
    if match and _single_value(match.group("rest")):
        return make(name, "equals", literal(match.group("rest")))
    return make(name, "judge")


def _flip(check: Check) -> Check:
    from dataclasses import replace

    return replace(check, negated=not check.negated)


def _single_value(text: str) -> bool:
    """One literal: a backticked span, a quoted string, a number, a JSON array or object."""
    text = text.strip().rstrip(".").strip()
    if re.fullmatch(r"`[^`]*`", text) or re.fullmatch(r'"[^"]*"', text):
        return True
    if text[:1] in "[{" or re.fullmatch(r"-?\d+(\.\d+)?|true|false|null", text):
        try:
            loads_strict(text)
        except (ValueError, RecursionError):
            return False
        return True
    return False
