"""The Backend Protocol every state store implements, and helpers they share.

A backend holds the durable, canonical state: each node's append-only receipt chain,
its content-addressed versions (OPWM1 frames) and published version, a small key/value
store (caller inputs, last trigger data, cadence clocks), the commit write-ahead
records that make commit-and-sign resumable, the wake inbox, and the runner lock.
The run directory (workspace, staging, run ledgers, vm.log.md) always lives on disk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .. import userjson
from ..protocol import PendingRecord, Receipt, ReceiptStatus
from ..receipts import content_hash, parse_lines, receipt_line, verify_node_chain
from ..reconciler import NodeHead

if TYPE_CHECKING:
    from .sqlstate import SqlState

__all__ = [
    "Backend",
    "BackendError",
    "ChainError",
    "UnstorableError",
    "heads_from_ledger",
    "stored_json",
    "verified_line",
    "verify_stored",
]


class BackendError(RuntimeError):
    """The store is unreachable, corrupt or locked; the message is safe to print."""


class UnstorableError(BackendError):
    """A value this store cannot hold (PostgreSQL's JSONB refuses a NUL or a lone
    surrogate), refused before anything is acknowledged: the caller's error."""


class ChainError(BackendError):
    """An append that would break the node's chain: its `prev` is not the current head (a
    lost or forked commit) or its `content_hash` does not recompute."""


@runtime_checkable
class Backend(Protocol):
    """Durable state for one OpenProse root. All methods are safe under the runner lock."""

    name: str
    # True when nothing survives the process (in-context): no durable run folder, no
    # cache markers; False for the durable stores
    ephemeral: bool
    # the seed 004 run-state tables (run lifecycle, executions, bindings, agents,
    # segments, imports) on the SQL stores; None where the run folder holds them
    run_state: SqlState | None

    def describe(self) -> str:
        """A human description with no secrets (never a connection string)."""
        ...

    def try_lock(self) -> bool:
        """Take the exclusive runner lock without waiting; False when another holds it."""
        ...

    def unlock(self) -> None: ...

    def heads(self, nodes: Iterable[str]) -> dict[str, NodeHead]:
        """Load each node's chain, verifying every hash and `prev` (BackendError if not)."""
        ...

    def ledger(self, node: str) -> list[Receipt]: ...

    def repair(self) -> list[str]:
        """Under the lock, before recovery: cut what interrupted writes left torn (the
        filesystem's ledger tails); one message per repair."""
        ...

    def append_receipt(self, run_id: str, receipt: Receipt) -> None:
        """Durably append (the commit point) the line `verified_line(receipt, head)`
        returns, checked inside the store's own transaction or lock; ChainError when it
        refuses the receipt."""
        ...

    def put_version(
        self, node: str, address: str, frame: bytes, *, run_id: str | None = None
    ) -> None:
        """Store a version (idempotent); `run_id` is the run committing it (PostgreSQL
        keeps a frame over 100 KiB as that run's attachment, as seed 004 says)."""
        ...

    def get_version(self, node: str, address: str) -> bytes: ...

    def set_published(self, node: str, address: str, files: Mapping[str, bytes]) -> None: ...

    def published_version(self, node: str) -> str | None:
        """The ContentAddress of the node's published artifact (None before any commit)."""
        ...

    def get_value(self, key: str) -> Any | None:
        """The value stored under a key (keys.py builds every key), None when unset."""
        ...

    def put_value(self, key: str, value: Any) -> None: ...

    def put_pending(self, node: str, record: PendingRecord) -> None: ...

    def pendings(self) -> dict[str, dict[str, Any]]:
        """Every node's write-ahead record as stored (unchecked: `is_pending_record`)."""
        ...

    def clear_pending(self, node: str) -> None: ...

    def enqueue(self, wake: Mapping[str, Any]) -> None: ...

    def inbox(self) -> list[tuple[str, dict[str, Any]]]:
        """Every queued wake with its id, oldest first, as stored (unchecked:
        `is_queued_wake`). Nothing is removed: a runner records the wakes in its run
        first and then `take`s them, so a crash in between loses none (runtime/inbox.py)."""
        ...

    def take(self, ids: Sequence[str]) -> None:
        """Remove the queued wakes with these ids (absent ones are ignored)."""
        ...

    def close(self) -> None: ...


def stored_json(data: bytes | str, where: str) -> Any:
    """A JSON value a backend stored (a key/value, a pending record, a queued wake),
    read strictly: a store someone edited into NaN, 1e400, a deep nest or bad bytes is a
    BackendError naming the place, never a crash."""
    try:
        return userjson.loads(data, source="")
    except userjson.JSONInputError as exc:
        raise BackendError(f"{where} cannot be trusted: {exc}") from None


def verified_line(receipt: Receipt, head: str | None) -> bytes:
    """The commit checks every store runs inside its own transaction or lock before an
    append: the receipt's `content_hash` recomputes and its `prev` is `head`, the hash of
    the node's last stored receipt (None for an empty chain). Returns the canonical
    ledger line to store; raises ChainError naming the node otherwise."""
    node = receipt.get("node")
    stated, actual = receipt.get("content_hash"), content_hash(receipt)
    if stated != actual:
        raise ChainError(
            f"receipt for {node!r} states content_hash {stated} but hashes to {actual}"
        )
    if receipt.get("prev") != head:
        raise ChainError(
            f"receipt for {node!r} has prev {receipt.get('prev')} but the ledger head is {head}"
        )
    return receipt_line(receipt)


def verify_stored(node: str, lines: list[bytes], where: str) -> list[Receipt]:
    """Verify a node's chain stored as canonical receipt lines (SQL backends); raise
    BackendError naming the node and position of the first problems."""
    numbered = [(str(i), line) for i, line in enumerate(lines, start=1)]
    typed, findings = verify_node_chain(where, node, parse_lines(where, numbered))
    if findings:
        shown = "; ".join(str(f) for f in findings[:3])
        raise BackendError(f"durable ledger of {node!r} cannot be trusted: {shown}")
    return typed


def heads_from_ledger(receipts: list[Receipt]) -> NodeHead:
    """A NodeHead from a verified chain."""
    last = receipts[-1] if receipts else None
    last_ok = next((r for r in reversed(receipts) if r["status"] != ReceiptStatus.FAILED), None)
    return NodeHead(last=last, last_ok=last_ok)
