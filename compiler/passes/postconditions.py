"""`### Maintains` postconditions (and legacy `### Criteria`) → validators.

A postcondition with a deterministic form becomes a predicate the runtime checks at
commit; every other one is render-attested under a stable id. The validator's schema
describes the declared shape of the structured truth.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..frozen import FrozenMap, freeze
from ..ir import Body, ClauseKind, Contract, Section, Span, Topology
from ..lowered import Attestation, Predicate, Validator

JSON_SCHEMA = "https://json-schema.org/draft/2020-12/schema"
_PATH = r"`(?P<path>[A-Za-z_@$][\w@$:\-]*(?:\.[\w@$:*\-]+)*)`"
_VALUE = r"(?P<value>`[^`]+`|true|false|null|-?\d+(?:\.\d+)?|\"[^\"]*\")"
_OPS = {
    "at least": ">=",
    "no less than": ">=",
    "at most": "<=",
    "no more than": "<=",
    "more than": ">",
    "greater than": ">",
    "fewer than": "<",
    "less than": "<",
    "exactly": "==",
}
_OP = r"(?P<op>" + "|".join(sorted(_OPS, key=len, reverse=True)) + r"|>=|<=|>|<|==)"
_ALWAYS = re.compile(
    rf"^{_PATH}\s+(?:is|are|must be|stays)\s+(?P<neg>always|never)\s+{_VALUE}\.?$", re.IGNORECASE
)
_EVERY = re.compile(
    rf"^(?:every|each)\s+(?:entry|item|element)?\s*(?:of|in)?\s*{_PATH}\s+(?:entry\s+|item\s+)?"
    r"(?:has|have|carries|includes|cites)\s+(?:a|an|the|its|at least one)?\s*(?:non-empty\s+)?"
    r"`(?P<has>[^`]+)`\.?$",
    re.IGNORECASE,
)
_COUNT = re.compile(
    rf"^{_PATH}\s+(?:has|have|contains|holds|lists)\s+{_OP}\s+(?P<n>\d+)\b[^`]*$", re.IGNORECASE
)
_COMPARE = re.compile(
    rf"^{_PATH}\s+(?:is|are|stays|must be)\s+(?:always\s+)?{_OP}\s+(?P<n>-?\d+(?:\.\d+)?)\.?$",
    re.IGNORECASE,
)
_EXISTS = re.compile(
    rf"^{_PATH}\s+(?:is|are)\s+(?:always\s+)?(?P<how>present|set|required|non-empty|not empty)\.?$",
    re.I,
)
_MARKER = re.compile(r"^\W*postconditions?\b", re.IGNORECASE)
_EACH_ITEM = re.compile(r"^(?:each|every)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Statement:
    text: str
    span: Span


def run(
    topology: Topology, compile_contract: Callable[[Contract], Validator] | None = None
) -> dict[str, Validator]:
    """One validator per topology node (`compile_contract`: a memoized `compile_node`)."""
    make = compile_contract or compile_node
    return {node.name: make(node.contract) for node in topology.nodes}


def compile_node(contract: Contract) -> Validator:
    predicates: dict[str, Predicate] = {}
    attested: dict[str, Attestation] = {}
    for statement in statements(contract):
        text = normalize(statement.text)
        if not text:
            continue
        ident = stable_id(contract.name, text)
        predicate = lower(ident, text)
        if predicate is not None:
            predicates.setdefault(ident, predicate)
        else:
            attested.setdefault(ident, Attestation(id=ident, text=text, span=statement.span))
    return Validator(
        schema=freeze(truth_schema(contract)),
        predicates=tuple(predicates.values()),
        attested=tuple(attested.values()),
    )


def statements(contract: Contract) -> Iterator[_Statement]:
    """Postconditions in source order: clauses, items under a `Postconditions` marker,
    `each …` items of Maintains, and legacy `### Criteria`."""
    maintains = contract.section("maintains")
    bodies: list[Body] = []
    if maintains is not None:
        bodies = [maintains.body, *(f.body for f in maintains.facets)]
    for body in bodies:
        for clause in body.clauses:
            if clause.kind is ClauseKind.POSTCONDITION:
                yield _Statement(clause.text, clause.span)
        yield from _marked_items(body)
    if maintains is not None:
        for item in maintains.body.items:
            if item.name is None and _EACH_ITEM.match(item.text):
                yield _Statement(item.text, item.span)
    for section in contract.sections_named("criteria"):
        yield from _criteria(section)


def _marked_items(body: Body) -> Iterator[_Statement]:
    markers = [p.span.line for p in body.paragraphs if _MARKER.match(p.text)]
    if not markers:
        return
    boundaries = sorted(p.span.line for p in body.paragraphs)
    for marker in markers:
        following = [line for line in boundaries if line > marker]
        end = following[0] if following else 10**9
        for item in body.items:
            if marker < item.span.line < end:
                yield _Statement(item.text, item.span)


def _criteria(section: Section) -> Iterator[_Statement]:
    for item in section.body.items:
        yield _Statement(item.text, item.span)
    for clause in section.body.clauses:
        yield _Statement(clause.text, clause.span)
    if not section.body.items:
        for paragraph in section.body.paragraphs:
            yield _Statement(paragraph.text, paragraph.span)


def normalize(text: str) -> str:
    """Whitespace collapsed, emphasis markers dropped: reflowing never changes an id."""
    return " ".join(text.replace("**", "").replace("__", "").split()).strip()


def stable_id(node: str, text: str) -> str:
    digest = hashlib.sha256(f"{node}\0{text.lower()}".encode()).hexdigest()
    return f"pc-{digest[:12]}"


def lower(ident: str, text: str) -> Predicate | None:
    """The deterministic form of a postcondition, when it has one."""
    match = _ALWAYS.match(text)
    if match:
        kind = "never" if match.group("neg").lower() == "never" else "always"
        return _predicate(ident, kind, match, text, equals=_literal(match.group("value")))
    match = _EVERY.match(text)
    if match:
        return _predicate(ident, "every", match, text, has=match.group("has"))
    match = _COUNT.match(text)
    if match:
        return _predicate(ident, "count", match, text, op=_op(match), value=int(match.group("n")))
    match = _COMPARE.match(text)
    if match:
        return _predicate(
            ident, "compare", match, text, op=_op(match), value=_num(match.group("n"))
        )
    match = _EXISTS.match(text)
    if match:
        if match.group("how").lower() in ("non-empty", "not empty"):
            return _predicate(ident, "count", match, text, op=">=", value=1)
        return _predicate(ident, "exists", match, text)
    return None


def _predicate(ident: str, kind: str, match: re.Match[str], text: str, **params: Any) -> Predicate:
    return Predicate(
        id=ident, kind=kind, path=match.group("path"), text=text, params=FrozenMap(params)
    )


def _op(match: re.Match[str]) -> str:
    op = match.group("op").lower()
    return _OPS.get(op, op)


def _num(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() and "." not in text else value


def _literal(text: str) -> Any:
    raw = text.strip("`")
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "null":
        return None
    if re.fullmatch(r"-?\d+", raw):
        return int(raw)
    if re.fullmatch(r"-?\d+\.\d+", raw):
        return float(raw)
    return raw.strip('"')


def truth_schema(contract: Contract) -> dict[str, Any]:
    """The declared shape: an object whose named Maintains items and facets are keys."""
    properties: dict[str, Any] = {}
    maintains = contract.section("maintains")
    if maintains is not None:
        for item in maintains.body.items:
            if item.name and re.fullmatch(r"[A-Za-z_@$][\w@$\-]*", item.name):
                description = " ".join(item.description.split())
                properties.setdefault(
                    item.name, {"description": description} if description else {}
                )
        for facet in maintains.facets:
            properties.setdefault(facet.name, {"description": f"facet `{facet.name}`"})
    schema: dict[str, Any] = {"$schema": JSON_SCHEMA, "type": "object"}
    if properties:
        schema["properties"] = dict(sorted(properties.items()))
    return schema
