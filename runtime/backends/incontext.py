"""The in-context backend: nothing durable. State lives in this process's memory and is
gone when it ends (seed 003); the CLI narrates the run with the compact markers
(`1→ node ✓`, `∥ [a b]`, `∥ [a✓ b✓] done`, `2→ node ✗ error`) instead of writing a
durable run directory."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..canonical import sha256_token
from ..protocol import EventKind, PendingRecord, Receipt
from ..reconciler import NodeHead
from .base import BackendError, heads_from_ledger, verified_line, verify_stored

if TYPE_CHECKING:
    from .sqlstate import SqlState

__all__ = ["InContextBackend", "Narrator"]

_MARKS = {EventKind.RENDERED: "✓", EventKind.SKIPPED: "∅", EventKind.FAILED: "✗"}


class InContextBackend:
    """All durable-state operations, held in dictionaries."""

    name = "in-context"
    ephemeral = True
    run_state: SqlState | None = None

    def __init__(self) -> None:
        self._ledgers: dict[str, list[bytes]] = {}
        self._versions: dict[str, bytes] = {}
        self._published: dict[str, str] = {}
        self._kv: dict[str, Any] = {}
        self._pending: dict[str, dict[str, Any]] = {}
        self._inbox: list[tuple[str, dict[str, Any]]] = []
        self._queued = 0
        self._locked = False
        self._vm: SqlState | None = None

    def vm_state(self, runs: Path) -> SqlState:
        """The seed 004 run tables of this process's VM runs: an in-memory SQLite
        database (made on first use; `runs` is where large bindings' attachments go)."""
        if self._vm is None:
            from .sqlite import memory_state

            self._vm = memory_state(runs)
        return self._vm

    def describe(self) -> str:
        return "in-context (memory only; nothing survives the process)"

    def try_lock(self) -> bool:
        if self._locked:
            return False
        self._locked = True
        return True

    def unlock(self) -> None:
        self._locked = False

    def ledger(self, node: str) -> list[Receipt]:
        return verify_stored(node, self._ledgers.get(node, []), f"in-context#{node}")

    def heads(self, nodes: Iterable[str]) -> dict[str, NodeHead]:
        return {node: heads_from_ledger(self.ledger(node)) for node in nodes}

    def repair(self) -> list[str]:
        return []  # transactions never leave a torn record

    def append_receipt(self, run_id: str, receipt: Receipt) -> None:
        node = str(receipt["node"])
        chain = self._ledgers.setdefault(node, [])
        head = self.ledger(node)[-1]["content_hash"] if chain else None
        chain.append(verified_line(receipt, head))

    def put_version(
        self, node: str, address: str, frame: bytes, *, run_id: str | None = None
    ) -> None:
        if sha256_token(frame) != address:
            raise BackendError(f"version of {node!r} does not hash to {address}")
        self._versions[address] = bytes(frame)

    def get_version(self, node: str, address: str) -> bytes:
        if address not in self._versions:
            raise BackendError(f"version {address} of {node!r} is missing")
        return self._versions[address]

    def published_version(self, node: str) -> str | None:
        return self._published.get(node)

    def set_published(self, node: str, address: str, files: Mapping[str, bytes]) -> None:
        self._published[node] = address

    def get_value(self, key: str) -> Any | None:
        return copy.deepcopy(self._kv.get(key))

    def put_value(self, key: str, value: Any) -> None:
        self._kv[key] = copy.deepcopy(value)

    def put_pending(self, node: str, record: PendingRecord) -> None:
        self._pending[node] = copy.deepcopy(dict(record))

    def pendings(self) -> dict[str, dict[str, Any]]:
        return copy.deepcopy(self._pending)

    def clear_pending(self, node: str) -> None:
        self._pending.pop(node, None)

    def enqueue(self, wake: Mapping[str, Any]) -> None:
        self._queued += 1
        self._inbox.append((str(self._queued), copy.deepcopy(dict(wake))))

    def inbox(self) -> list[tuple[str, dict[str, Any]]]:
        return copy.deepcopy(self._inbox)

    def take(self, ids: Sequence[str]) -> None:
        taken = set(ids)
        self._inbox = [(wake_id, wake) for wake_id, wake in self._inbox if wake_id not in taken]

    def close(self) -> None:
        self.unlock()


class Narrator:
    """Turns engine events into seed 003's compact narration lines.

    `start()` announces the state mode; a wave of several renders is reported when it
    joins, in node-name order whichever finished first (`∥ [a b]`, one progress line per
    branch done, `∥ [a✓ b✓] done`), so a run's narration is always the same; `end()`
    closes it with `---end` (or `---error`)."""

    def __init__(self, emit: Any) -> None:
        self.emit = emit
        self.count = 0
        self.group: list[str] = []
        self.results: dict[str, str] = {}
        self.size = 0

    def start(self) -> None:
        self.emit("OpenProse Run Start")
        self.emit("   State mode: in-context (the system is small, it fits in context)")

    def end(self, failed: int = 0) -> None:
        self.emit(f"---error {failed} failed" if failed else "---end")

    def __call__(self, event: Any) -> None:
        kind, node = event.kind, event.node
        if kind == EventKind.WAVE:
            self.size = event.total
            self.group, self.results = [], {}
        elif kind == EventKind.START:
            self.group.append(node)
        elif kind in _MARKS:
            mark = _MARKS[kind]
            if self.size > 1 and node in self.group:
                self.results[node] = mark
                if len(self.results) == self.size:
                    names = sorted(self.group)
                    marks = [f"{n}{self.results[n]}" for n in names]
                    self.emit(f"∥ [{' '.join(names)}]")
                    for done in range(1, len(names)):
                        rest = [f"{n}→" for n in names[done:]]
                        self.emit(f"∥ [{' '.join(marks[:done] + rest)}]")
                    self.emit(f"∥ [{' '.join(marks)}] done")
                    self.size = 0
                return
            self.count += 1
            suffix = f" {event.detail}" if kind == EventKind.FAILED and event.detail else ""
            self.emit(f"{self.count}→ {node} {mark}{suffix}")
