"""What the receipts cost: fresh vs reused tokens by node and by surprise cause.

`prosec receipts cost`, `GET /cost` of `prosec serve` and the devtools token meter all
read this one summary. A receipt's `cost.tokens` says how many tokens its render paid
for (`fresh`) and how many it took from a cache or an earlier render (`reused`);
`cost.surprise_cause` says which wake source caused it. Receipts read back from storage
are checked by the backend; a cost that is not a pair of counts adds nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .protocol import WakeSource

__all__ = ["cost_summary", "receipt_tokens"]

_STATUSES = ("rendered", "skipped", "failed")


def receipt_tokens(receipt: Mapping[str, Any]) -> tuple[int, int]:
    """(fresh, reused) tokens of one receipt; (0, 0) when it records none."""
    cost = receipt.get("cost")
    tokens = cost.get("tokens") if isinstance(cost, Mapping) else None
    if not isinstance(tokens, Mapping):
        return 0, 0
    return _count(tokens.get("fresh")), _count(tokens.get("reused"))


def receipt_cause(receipt: Mapping[str, Any]) -> str:
    """The surprise cause of a receipt (its wake source when the cost does not say)."""
    cost = receipt.get("cost")
    cause = cost.get("surprise_cause") if isinstance(cost, Mapping) else None
    if isinstance(cause, str) and cause:
        return cause
    wake = receipt.get("wake")
    source = wake.get("source") if isinstance(wake, Mapping) else None
    return source if isinstance(source, str) and source else "unknown"


def cost_summary(
    receipts: Iterable[Mapping[str, Any]], order: Iterable[str] = ()
) -> dict[str, Any]:
    """Totals, then one row per node (in `order`, then any other node by name) and per
    surprise cause (input, self, external, then any other by name)."""
    total = _row()
    nodes: dict[str, dict[str, int]] = {name: _row() for name in order}
    causes: dict[str, dict[str, int]] = {str(source): _row() for source in WakeSource}
    for receipt in receipts:
        fresh, reused = receipt_tokens(receipt)
        status = str(receipt.get("status", ""))
        node = str(receipt.get("node", ""))
        for row in (
            total,
            nodes.setdefault(node, _row()),
            causes.setdefault(receipt_cause(receipt), _row()),
        ):
            row["receipts"] += 1
            row["fresh"] += fresh
            row["reused"] += reused
            if status in _STATUSES:
                row[status] += 1
    known = list(dict.fromkeys(order))
    node_names = known + sorted(set(nodes) - set(known))
    cause_names = [str(s) for s in WakeSource] + sorted(set(causes) - {str(s) for s in WakeSource})
    return {
        "total": _finish(total),
        "by_node": [{"node": name, **_finish(nodes[name])} for name in node_names],
        "by_cause": [{"cause": name, **_finish(causes[name])} for name in cause_names],
    }


def _row() -> dict[str, int]:
    return {"receipts": 0, "rendered": 0, "skipped": 0, "failed": 0, "fresh": 0, "reused": 0}


def _finish(row: dict[str, int]) -> dict[str, Any]:
    spent = row["fresh"] + row["reused"]
    # the share of tokens that were reused rather than paid for again
    ratio = round(row["reused"] / spent, 4) if spent else 0.0
    return {**row, "tokens": spent, "reuse_ratio": ratio}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
