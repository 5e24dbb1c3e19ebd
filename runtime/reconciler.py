"""Pure reconciler planning: memo keys, wake decisions, readiness and propagation.

No I/O here: the executor feeds in heads (last receipts) and values, and applies the
decisions through a backend.

* Memo key = (contract_fingerprint, input_fingerprints). Input fingerprints are one
  token per input slot: each subscribed (producer, facet) in sorted order (the
  producer's current token, the cold-start token before its first commit), then each
  declared caller input by name, then — for gateways — the token of the last trigger
  data. Only rendered/skipped receipts establish a memo; a failed one never does, so
  the next wake retries.
* A wake decides: `self` wakes (ticks, due cadences) always render; otherwise a memo
  hit writes a `skipped` receipt when a wake arrived and nothing at all when none did;
  a memo miss renders.
* Readiness (the diamond rule): a pending node may start only when none of its
  ancestors is pending or running (its inputs are settled) and none of its descendants
  is running (so a re-commit never changes what a running reader has pinned).
* Propagation: only a `rendered` receipt propagates, and only to subscribers of the
  facets whose tokens moved.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .canonicalizer import ATOMIC, COLD_START_TOKEN, cold_start_map
from .intent import Intent
from .protocol import Action, Receipt, SlotKind, WakeSource

__all__ = [
    "Decision",
    "NodeHead",
    "Slot",
    "Wake",
    "decide",
    "input_fingerprints",
    "input_slots",
    "moved_facets",
    "plan_wave",
    "ready",
    "subscribers_woken",
]

SOURCE_RANK = {WakeSource.INPUT: 0, WakeSource.SELF: 1, WakeSource.EXTERNAL: 2}


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeHead:
    """What the ledger says about a node: its last receipt and last non-failed receipt."""

    last: Receipt | None = None
    last_ok: Receipt | None = None

    @property
    def hash(self) -> str | None:
        return None if self.last is None else str(self.last["content_hash"])

    def fingerprints(self, facets: Iterable[str]) -> dict[str, str]:
        """The node's current tokens (a failed receipt carries the prior ones forward)."""
        if self.last is None:
            return cold_start_map(facets)
        return dict(self.last["fingerprints"])

    def memo(self) -> tuple[str, tuple[str, ...]] | None:
        if self.last_ok is None:
            return None
        return (
            str(self.last_ok["contract_fingerprint"]),
            tuple(self.last_ok["input_fingerprints"]),
        )


@dataclass(frozen=True, slots=True, init=False)
class Wake:
    """A wake arriving at a node; several wakes for one node coalesce with `merge`.

    It parses its source (a member, or a string from a command line or a stored wake):
    ValueError for anything but a WakeSource."""

    source: WakeSource
    refs: frozenset[str]

    def __init__(self, *, source: str, refs: Iterable[str] = frozenset()) -> None:
        object.__setattr__(self, "source", WakeSource(source))
        object.__setattr__(self, "refs", frozenset(refs))

    def merge(self, other: Wake) -> Wake:
        source = max(self.source, other.source, key=SOURCE_RANK.__getitem__)
        return Wake(source=source, refs=self.refs | other.refs)


@dataclass(frozen=True, slots=True, kw_only=True)
class Slot:
    """One position of a node's input fingerprint list."""

    label: str
    kind: SlotKind
    producer: str | None = None
    facet: str | None = None
    name: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """What to do with a pending node: render, write a skipped receipt, or nothing."""

    action: Action
    reason: str
    memo: tuple[str, tuple[str, ...]] = field(default=("", ()))


def input_slots(intent: Intent, node: str) -> list[Slot]:
    """The node's input slots in memo order."""
    slots = [
        Slot(
            label=f"{e.producer}.{e.facet}", kind=SlotKind.EDGE, producer=e.producer, facet=e.facet
        )
        for e in intent.inputs_of[node]
    ]
    for item in sorted(intent.nodes[node].caller_inputs, key=lambda c: c.name):
        slots.append(Slot(label=f"caller:{item.name}", kind=SlotKind.CALLER, name=item.name))
    if intent.nodes[node].wake_source == WakeSource.EXTERNAL or node in intent.entry_points:
        slots.append(Slot(label="external", kind=SlotKind.EXTERNAL))
    return slots


def input_fingerprints(
    intent: Intent,
    node: str,
    heads: Mapping[str, NodeHead],
    caller_tokens: Mapping[str, str],
    external_tokens: Mapping[str, str],
) -> list[str]:
    """Current input tokens of a node, one per slot."""
    out: list[str] = []
    for slot in input_slots(intent, node):
        if slot.kind == SlotKind.EDGE:
            assert slot.producer is not None and slot.facet is not None
            head = heads.get(slot.producer, NodeHead())
            tokens = head.fingerprints(intent.nodes[slot.producer].facets)
            out.append(tokens.get(slot.facet, COLD_START_TOKEN))
        elif slot.kind == SlotKind.CALLER:
            out.append(caller_tokens.get(str(slot.name), COLD_START_TOKEN))
        else:
            out.append(external_tokens.get(node, COLD_START_TOKEN))
    return out


def decide(
    *,
    contract_fingerprint: str,
    inputs: Sequence[str],
    head: NodeHead,
    wake: Wake | None,
) -> Decision:
    """Decide render / skip / drop for a node whose inputs are settled."""
    memo = (contract_fingerprint, tuple(inputs))
    previous = head.memo()
    if wake is not None and wake.source == WakeSource.SELF:
        return Decision(action=Action.RENDER, reason="self-driven wake", memo=memo)
    if previous is None:
        reason = "cold start" if head.last is None else "retry after failure"
        return Decision(action=Action.RENDER, reason=reason, memo=memo)
    if previous[0] != contract_fingerprint:
        return Decision(action=Action.RENDER, reason="contract changed", memo=memo)
    if previous[1] != memo[1]:
        return Decision(action=Action.RENDER, reason="inputs moved", memo=memo)
    if wake is not None:
        return Decision(action=Action.SKIP, reason="memo hit", memo=memo)
    return Decision(action=Action.DROP, reason="memo hit, no wake", memo=memo)


def ready(intent: Intent, pending: Iterable[str], running: Iterable[str]) -> list[str]:
    """Pending nodes whose inputs are settled, in topological order (the diamond rule)."""
    index = intent.index
    pending_list = sorted(pending, key=index.__getitem__)
    busy = 0
    for name in pending_list:
        busy |= 1 << index[name]
    running_mask = 0
    for name in running:
        busy |= 1 << index[name]
        running_mask |= 1 << index[name]
    return [
        name
        for name in pending_list
        if not (intent.ancestors[name] & busy) and not (intent.descendants[name] & running_mask)
    ]


@dataclass(frozen=True, slots=True, kw_only=True)
class WavePlan:
    """One wave: nodes to render, nodes to answer with a skipped receipt, nodes dropped."""

    renders: tuple[tuple[str, Decision], ...]
    skips: tuple[tuple[str, Decision], ...]
    drops: tuple[str, ...]
    blocked: tuple[str, ...]


def plan_wave(
    intent: Intent,
    pending: Iterable[str],
    running: Iterable[str],
    decide_node: Callable[[str], Decision],
) -> WavePlan:
    """Single pass in topological order: settled nodes are decided, the rest wait.

    A node is settled when no ancestor is pending, rendering in this wave or running,
    and no descendant is running. Skips and drops settle immediately (they never move a
    token), so one pass decides a whole unchanged graph.
    """
    index = intent.index
    running_mask = 0
    for name in running:
        running_mask |= 1 << index[name]
    busy = running_mask
    renders: list[tuple[str, Decision]] = []
    skips: list[tuple[str, Decision]] = []
    drops: list[str] = []
    blocked: list[str] = []
    for name in sorted(set(pending), key=index.__getitem__):
        bit = 1 << index[name]
        if intent.ancestors[name] & busy or intent.descendants[name] & running_mask or bit & busy:
            busy |= bit
            blocked.append(name)
            continue
        decision = decide_node(name)
        if decision.action == Action.RENDER:
            renders.append((name, decision))
            busy |= bit
        elif decision.action == Action.SKIP:
            skips.append((name, decision))
        else:
            drops.append(name)
    return WavePlan(
        renders=tuple(renders), skips=tuple(skips), drops=tuple(drops), blocked=tuple(blocked)
    )


def moved_facets(
    prior: Mapping[str, str], current: Mapping[str, str], facets: Iterable[str]
) -> list[str]:
    """Facets whose token differs (sorted, `@atomic` first)."""
    moved = [f for f in facets if prior.get(f) != current.get(f)]
    return sorted(moved, key=lambda f: (f != ATOMIC, f))


def subscribers_woken(intent: Intent, node: str, moved: Iterable[str]) -> list[str]:
    """Subscribers of the moved facets of `node`."""
    woken: set[str] = set()
    for facet in moved:
        woken.update(intent.subscribers_of.get((node, facet), ()))
    return sorted(woken, key=intent.index.__getitem__)
