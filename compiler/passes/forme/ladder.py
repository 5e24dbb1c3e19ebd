"""The Forme ladder: pinned → qualified → named → emits → mentioned, for one need."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from ...config import WiringPin
from ...ir import ATOMIC_FACET, Edge, Need, Resolution, Rung
from ...values import value
from .index import EmitsEntry, ProducerIndex
from .text import NeedText, Token, analyze, family, is_family_pattern, key, words

_QUALIFIER_BEFORE = re.compile(
    r"(?:\bthe\s+`[^`]+`(?:\s*(?:,|and)\s*`[^`]+`)*\s+facets?\s+(?:of|on|from)\s+(?:the\s+)?"
    r"|\bmaintained\s+by\s+(?:the\s+)?(?:\w+\s+)?"
    r"|\b(?:from|of|by|on|via)\s+(?:the\s+)?(?:\w+\s+)?)$",
    re.IGNORECASE,
)
_QUALIFIER_AFTER = re.compile(
    r"^(?:['’]s\b|\s*\([^)]{1,40}\)\s+\w+['’]s\b|\s+(?:gateway|node|nodes|truth|truths)\b)"
)


@value
class Match:
    """One producer a rung found, the facets it fixed (None: choose) and why."""

    node: str
    facets: tuple[str, ...] | None
    evidence: str
    token: Token | None = None
    pinned: bool = False  # a prose.toml pin or the need's own `producer.facet` name
    template: str | None = None  # found by naming a contract template: one of its mounts


@value
class Problem:
    """A reference the ladder found broken (a named facet the producer lacks)."""

    message: str


def resolve(
    subscriber: str,
    need: Need,
    pins: Sequence[WiringPin],
    index: ProducerIndex,
    emits: Mapping[str, list[EmitsEntry]],
) -> tuple[Resolution, list[Problem]]:
    """Climb the ladder for one need; the first rung that yields candidates decides."""
    text = analyze(need.text, need.name)
    if need.run_typed or text.caller:
        reason = f"run-typed ({need.run_typed})" if need.run_typed else "supplied by the caller"
        return Resolution(subscriber=subscriber, need=need, status="caller", evidence=reason), []
    if pins:
        matches = [
            Match(p.producer, (p.facet,), f"prose.toml pin: {p.producer}.{p.facet}", pinned=True)
            for p in pins
        ]
        return _decide(subscriber, need, Rung.PINNED, matches, text, True, index)
    problems: list[Problem] = []
    explicit = _explicit(need, index, problems)
    if explicit:
        resolution, found = _decide(subscriber, need, Rung.PINNED, explicit, text, True, index)
        return resolution, problems + found
    rungs: tuple[tuple[Rung, Callable[[], list[Match]]], ...] = (
        (Rung.QUALIFIED, lambda: _qualified(text, index, problems)),
        (Rung.NAMED, lambda: _named(need, text, index)),
        (Rung.EMITS, lambda: _emitted(subscriber, emits)),
        (Rung.MENTIONED, lambda: _mentioned(text, index)),
    )
    for rung, find in rungs:
        matches = find()
        if not matches:
            continue
        others = [m for m in matches if m.node != subscriber]
        if not others:
            evidence = matches[0].evidence
            return Resolution(
                subscriber=subscriber, need=need, status="self", rung=rung, evidence=evidence
            ), problems
        many = text.many
        if rung is Rung.QUALIFIED:
            many = many or text.listed(_tokens(others))
        elif rung is Rung.MENTIONED:
            many = False  # a mention wires only when it is unique
        if {m.template or m.node for m in others} == {others[0].template}:
            many = True  # a template named: its consumer subscribes to every mount
        resolution, found = _decide(subscriber, need, rung, others, text, many, index)
        return resolution, problems + found
    candidates = index.closest(need.text, subscriber)
    return Resolution(
        subscriber=subscriber,
        need=need,
        status="unsatisfied",
        candidates=candidates,
        evidence="no rung matched",
    ), problems


def _decide(
    subscriber: str,
    need: Need,
    rung: Rung,
    matches: list[Match],
    text: NeedText,
    many: bool,
    index: ProducerIndex,
) -> tuple[Resolution, list[Problem]]:
    by_node: dict[str, Match] = {}
    for match in matches:
        known = by_node.get(match.node)
        if known is None or (known.facets is None and match.facets is not None):
            by_node[match.node] = match
    chosen = {node: _facets(m, need, text, index) for node, m in by_node.items()}
    evidence = "; ".join(dict.fromkeys(m.evidence for m in by_node.values()))
    if len(by_node) > 1 and not many:
        candidates = tuple(
            f"{node}.{facet}" for node, (facets, _) in chosen.items() for facet in facets
        )
        return Resolution(
            subscriber=subscriber,
            need=need,
            status="ambiguous",
            candidates=candidates or tuple(by_node),
            rung=rung,
            evidence=evidence,
        ), []
    problems = [p for _, found in chosen.values() for p in found]
    edges = tuple(
        Edge(
            subscriber=subscriber,
            producer=node,
            facet=facet,
            rung=rung,
            evidence=by_node[node].evidence,
            need=need,
        )
        for node, (facets, _) in chosen.items()
        for facet in facets
    )
    status = "wired" if edges else "unsatisfied"
    return Resolution(
        subscriber=subscriber, need=need, edges=edges, status=status, rung=rung, evidence=evidence
    ), problems


def _facets(
    match: Match, need: Need, text: NeedText, index: ProducerIndex
) -> tuple[tuple[str, ...], list[Problem]]:
    """`(atomic)` forces `@atomic`; else the rung's facets; else the facets the need
    names (a facet written as a facet must exist); else `@atomic`."""
    if match.pinned and match.facets:
        return match.facets, []
    if text.atomic:
        return (ATOMIC_FACET,), []
    if match.facets:
        return match.facets, []
    producer = index.producers[match.node]
    named: list[str] = []
    problems: list[Problem] = []
    for token in text.facet_refs():
        hit = producer.facet_named(token.text)
        if hit:
            named.extend(hit)
        else:
            problems.append(_missing_facet(match.node, token.text, index))
    if named or problems:
        return tuple(dict.fromkeys(named)), problems
    sources = [t.text for t in text.code if not t.negated and t.text != match.node]
    if need.name:
        sources.insert(0, need.name)
    sources.extend(text.facet_words())
    for source in sources:
        named.extend(f for f in producer.facet_named(source) if f != ATOMIC_FACET)
    return tuple(dict.fromkeys(named)) or (ATOMIC_FACET,), []


def _explicit(need: Need, index: ProducerIndex, problems: list[Problem]) -> list[Match]:
    """The need's own explicit form: its leading name is `producer.facet`."""
    if not need.name or "." not in need.name:
        return []
    head, _, tail = need.name.partition(".")
    node = index.node(head)
    if node is None:
        return []
    facets = index.producers[node].facet_named(tail)
    if not facets:
        problems.append(_missing_facet(node, tail, index))
        return []
    return [Match(node, facets, f"need name `{need.name}`", pinned=True)]


def _qualified(text: NeedText, index: ProducerIndex, problems: list[Problem]) -> list[Match]:
    """The need names its producer: a backticked node name or `producer.facet`, or a
    bold `#` title."""
    found: list[Match] = []
    for token in _listed_with_lead(text):
        if text.followed_by_facet(token):
            continue
        content = token.text.lstrip("#").strip()
        node = index.reference(content)
        if node is not None:
            found.append(Match(node, None, _evidence(text, token), token))
            continue
        mounts = index.template(content)
        if mounts:
            evidence = _evidence(text, token)
            found.extend(Match(m, None, evidence, token, template=content) for m in mounts)
            continue
        head, dot, tail = content.partition(".")
        node = index.node(head) if dot else None
        if node is not None:
            facets = index.producers[node].facet_named(tail)
            if facets:
                found.append(Match(node, facets, _evidence(text, token), token))
            else:
                problems.append(_missing_facet(node, tail, index))
    for token in text.bold:
        if token.negated or token.start < text.body_start:
            continue
        for node in sorted(index.titles.get(words(token.text), ())):
            found.append(Match(node, None, f"**{token.text}**", token))
    return found


def _listed_with_lead(text: NeedText) -> list[Token]:
    """The code spans after the need's leading name, and the leading name itself when it
    opens a list of them (`` `a`, `b` and `c` (each via @atomic) ``)."""
    body = list(text.body_code())
    lead = next((t for t in text.code if t.start < text.body_start and not t.negated), None)
    if lead is not None and body and text.listed([lead, body[0]]):
        return [lead, *body]
    return body


def _named(need: Need, text: NeedText, index: ProducerIndex) -> list[Match]:
    """The need's leading name (or a truth it names, `the `x` truth`) equals a facet, a
    family, a node name or a Maintains item."""
    label = "facet-need" if need.facet_need else "need name"
    found: list[Match] = []
    if need.name:
        found.extend(_named_by(need.name, label, index))
    for name in text.truth_refs():
        if name != need.name:
            found.extend(_named_by(name, "named truth", index))
    return found


def _named_by(name: str, label: str, index: ProducerIndex) -> list[Match]:
    wanted = key(name)
    found: list[Match] = []
    for node, facet in sorted(index.facet_keys.get(wanted, ())):
        found.append(Match(node, (facet,), f"{label} `{name}` = facet `{node}.{facet}`"))
    prefix = family(name) if is_family_pattern(name) else wanted
    members: dict[str, list[str]] = {}
    for node, facet in sorted(index.families.get(prefix or "", ())):
        members.setdefault(node, []).append(facet)
    for node, facets in members.items():
        ordered = tuple(f for f in index.producers[node].facets if f in facets)
        found.append(Match(node, ordered, f"{label} `{name}` = facet family `{prefix}:*`"))
    for node in sorted(index.name_keys.get(wanted, ())):
        instance = index.producers[node].instance
        template = instance.template if instance and key(instance.template) == wanted else None
        what = f"template `{template}`" if template else f"node `{node}`"
        found.append(Match(node, None, f"{label} `{name}` = {what}", template=template))
    for node in sorted(index.item_keys.get(wanted, ())):
        found.append(Match(node, None, f"{label} `{name}` = Maintains item of `{node}`"))
    return found


def _emitted(subscriber: str, emits: Mapping[str, list[EmitsEntry]]) -> list[Match]:
    return [
        Match(e.gateway, None, f"`{e.gateway}` {e.evidence}") for e in emits.get(subscriber, [])
    ]


def _mentioned(text: NeedText, index: ProducerIndex) -> list[Match]:
    """A producer named in words in a referential phrase, or a facet only one emits."""
    found = [Match(m.node, None, m.evidence) for m in index.words.mentions(text)]
    for token in text.body_code():
        owners = index.facet_keys.get(key(token.text), set())
        if len({node for node, _ in owners}) == 1:
            node, facet = next(iter(owners))
            found.append(Match(node, (facet,), f"`{token.text}` is a facet only `{node}` emits"))
    return found


def _evidence(text: NeedText, token: Token) -> str:
    """The backticked reference with the qualifying words around it."""
    start, end = token.start, token.end
    before = _QUALIFIER_BEFORE.search(text.text[max(0, start - 80) : start])
    after = _QUALIFIER_AFTER.match(text.text[end : end + 48])
    left = start - len(before.group(0)) if before else start
    right = end + len(after.group(0)) if after else end
    return " ".join(text.text[left:right].split())


def _tokens(matches: Iterable[Match]) -> list[Token]:
    return [m.token for m in matches if m.token is not None]


def _missing_facet(node: str, facet: str, index: ProducerIndex) -> Problem:
    declared = ", ".join(f"`{f}`" for f in index.producers[node].facets) or "none"
    return Problem(
        f"`{node}` emits no facet `{facet}` (its facets: {declared}, and `@atomic`); "
        "name one of them or subscribe to `@atomic`"
    )
