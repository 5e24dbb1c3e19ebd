"""The receipt timeline: every receipt of a state in one order, with what each one moved.

One ledger per node says nothing about how the nodes interleave; a run's `vm.log.md`
does. `order_receipts` puts receipts in run order where a run recorded them and keeps
every dependency (a chain's `prev`, a wake's `refs`) for the rest. `steps` turns the
ordered receipts into the devtools' timeline: the facets each receipt moved, the edges
that carried the change, the receipts that caused it and its tokens.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..costs import receipt_cause, receipt_tokens
from ..runs import RunDir, runs_in_order

__all__ = ["Placed", "Step", "TopologyEdge", "order_receipts", "run_positions", "steps"]

_EVENT = re.compile(r"^(?P<n>\d+)(?P<sub>[a-z]?)→ (?P<node>\S+) ")
_LAST = (1 << 62, 0)


@dataclass(frozen=True, slots=True)
class TopologyEdge:
    """One subscription drawn on the DAG: `subscriber` reads `facet` of `producer`."""

    producer: str
    facet: str
    subscriber: str


@dataclass(frozen=True, slots=True)
class Placed:
    """A receipt with the run that wrote it (None when no run folder recorded it)."""

    receipt: Mapping[str, Any]
    run: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One receipt on the timeline, as the browser animates it."""

    index: int
    node: str
    status: str
    source: str
    cause: str
    refs: tuple[int, ...]  # steps whose receipts woke this one
    moved: tuple[str, ...]  # facets whose tokens this receipt moved
    edges: tuple[int, ...]  # topology edges that carried the move
    fresh: int
    reused: int
    hash: str
    version: str | None
    run: str | None
    error: str | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "node": self.node,
            "status": self.status,
            "source": self.source,
            "cause": self.cause,
            "refs": list(self.refs),
            "moved": list(self.moved),
            "edges": list(self.edges),
            "fresh": self.fresh,
            "reused": self.reused,
            "hash": self.hash,
            "version": self.version,
            "run": self.run,
            "error": self.error,
            "reason": self.reason,
        }


def run_positions(runs_dir: Path) -> dict[str, tuple[tuple[int, int], str]]:
    """content_hash → ((run number, line number), run id) for every receipt a run's
    `vm.log.md` lists, runs oldest first."""
    positions: dict[str, tuple[tuple[int, int], str]] = {}
    for number, run in enumerate(runs_in_order(runs_dir)):
        taken: dict[str, int] = {}
        chains: dict[str, list[dict[str, Any]]] = {}
        for line_number, line in enumerate(_log_lines(run)):
            match = _EVENT.match(line)
            if match is None:
                continue
            node = match.group("node")
            if node.startswith("∥") or node == "[input]":
                continue
            if node not in chains:
                chains[node] = _run_receipts(run, node)
            chain = chains[node]
            at = taken.get(node, 0)
            if at < len(chain):
                taken[node] = at + 1
                digest = chain[at].get("content_hash")
                if isinstance(digest, str):
                    positions.setdefault(digest, ((number, line_number), run.run_id))
    return positions


def order_receipts(
    ledgers: Mapping[str, Sequence[Mapping[str, Any]]],
    order: Sequence[str],
    positions: Mapping[str, tuple[tuple[int, int], str]],
) -> list[Placed]:
    """All receipts of `ledgers`, each after its chain predecessor and after the receipts
    its wake names; among the ready ones, run order first, then the topological order."""
    rank = {name: i for i, name in enumerate(order)}
    items: dict[str, tuple[str, int, Mapping[str, Any]]] = {}
    for node, chain in ledgers.items():
        for i, receipt in enumerate(chain):
            items[str(receipt["content_hash"])] = (node, i, receipt)
    waiting: dict[str, set[str]] = {}
    unblocks: dict[str, list[str]] = {}
    for digest, (node, i, receipt) in items.items():
        needs = {str(r) for r in receipt["wake"].get("refs", []) if r in items and r != digest}
        if i > 0:
            needs.add(str(ledgers[node][i - 1]["content_hash"]))
        waiting[digest] = needs
        for need in needs:
            unblocks.setdefault(need, []).append(digest)

    def key(digest: str) -> tuple[tuple[int, int], int, str, int]:
        node, i, _ = items[digest]
        return (
            positions[digest][0] if digest in positions else _LAST,
            rank.get(node, 1 << 30),
            node,
            i,
        )

    ready = [(key(d), d) for d, needs in waiting.items() if not needs]
    heapq.heapify(ready)
    placed: list[Placed] = []
    while ready:
        _, digest = heapq.heappop(ready)
        receipt = items[digest][2]
        placed.append(Placed(receipt, positions[digest][1] if digest in positions else None))
        for other in unblocks.get(digest, ()):
            waiting[other].discard(digest)
            if not waiting[other]:
                heapq.heappush(ready, (key(other), other))
    if len(placed) != len(items):  # a cycle of refs: keep the rest in chain order
        seen = {str(p.receipt["content_hash"]) for p in placed}
        rest = sorted((key(d), d) for d in items if d not in seen)
        placed.extend(Placed(items[d][2], None) for _, d in rest)
    return placed


def steps(placed: Iterable[Placed], edges: Sequence[TopologyEdge]) -> list[Step]:
    """The timeline of ordered receipts over a topology's edges."""
    out_edges: dict[tuple[str, str], list[int]] = {}
    for i, edge in enumerate(edges):
        out_edges.setdefault((edge.producer, edge.facet), []).append(i)
    index_of: dict[str, int] = {}
    tokens: dict[str, Mapping[str, Any]] = {}
    result: list[Step] = []
    for i, item in enumerate(placed):
        receipt = item.receipt
        node = str(receipt["node"])
        status = str(receipt["status"])
        fingerprints = receipt.get("fingerprints") or {}
        moved = _moved(receipt, tokens.get(node)) if status == "rendered" else ()
        if status != "failed":
            tokens[node] = fingerprints
        lit = sorted(e for facet in moved for e in out_edges.get((node, facet), ()))
        fresh, reused = receipt_tokens(receipt)
        diff = receipt.get("semantic_diff") or {}
        digest = str(receipt["content_hash"])
        result.append(
            Step(
                index=i,
                node=node,
                status=status,
                source=str(receipt["wake"].get("source", "")),
                cause=receipt_cause(receipt),
                refs=tuple(
                    sorted(index_of[r] for r in receipt["wake"].get("refs", []) if r in index_of)
                ),
                moved=moved,
                edges=tuple(lit),
                fresh=fresh,
                reused=reused,
                hash=digest,
                version=fingerprints.get("@atomic") if status == "rendered" else None,
                run=item.run,
                error=diff.get("error") if status == "failed" else None,
                reason=diff.get("reason") if status == "failed" else None,
            )
        )
        index_of[digest] = i
    return result


def _moved(receipt: Mapping[str, Any], before: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The facets a rendered receipt moved: its `semantic_diff.changed` when it says,
    else every token that differs from the node's previous tokens."""
    changed = (receipt.get("semantic_diff") or {}).get("changed")
    if isinstance(changed, list) and changed:
        return tuple(sorted(dict.fromkeys(str(f) for f in changed)))
    now = receipt.get("fingerprints") or {}
    before = before or {}
    return tuple(sorted(f for f, value in now.items() if before.get(f) != value))


def _log_lines(run: RunDir) -> list[str]:
    try:
        return run.log_lines()
    except OSError:
        return []


def _run_receipts(run: RunDir, node: str) -> list[dict[str, Any]]:
    try:
        return run.receipts(node)
    except (OSError, ValueError):
        return []
