"""Taking wakes from the inbox without ever losing one: claim, record, take, release.

A wake another process queued was acknowledged ("queued", exit 0), so it must survive a
runner killed at any point while taking it. The inbox and a run's `run.json` cannot
change in one atomic step (one is in the backend, the other on disk), so taking is a
small write-ahead protocol:

1. claim: store `{"run_id", "ids"}` under `inbox.claim` in the backend;
2. record: write the wakes (and the inbox ids they came from, `taken`) into the run's
   `run.json`, durably;
3. take: remove those ids from the inbox;
4. release: set the claim to null.

A crash before 2 leaves the wakes in the inbox (the claim is dropped); a crash after 2
leaves them recorded in the run, which `prosec resume` finishes, and `recover_claim`
removes them from the inbox so they are never served twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .backends import Backend
from .backends.base import BackendError
from .keys import inbox_claim_key
from .protocol import QueuedWake, is_queued_wake, wake_problem
from .runs import RunDir

__all__ = ["queued_wakes", "recover_claim", "take_inbox"]

Record = Callable[[list[str], list[dict[str, Any]]], None]


def take_inbox(backend: Backend, run_id: str, record: Record) -> list[dict[str, Any]]:
    """Every queued wake, recorded by `record(ids, wakes)` into run `run_id` before it
    leaves the inbox; [] when the inbox is empty."""
    queued = backend.inbox()
    if not queued:
        return []
    ids = [wake_id for wake_id, _ in queued]
    wakes = [wake for _, wake in queued]
    backend.put_value(inbox_claim_key(), {"run_id": run_id, "ids": ids})
    record(ids, wakes)
    backend.take(ids)
    backend.put_value(inbox_claim_key(), None)
    return wakes


def recover_claim(backend: Backend, runs: Path) -> bool:
    """Finish or drop a claim a crash interrupted (under the runner lock); True if one
    was found."""
    claim = backend.get_value(inbox_claim_key())
    if not isinstance(claim, dict):
        return False
    ids = [str(i) for i in claim.get("ids", [])] if isinstance(claim.get("ids"), list) else []
    run_id = claim.get("run_id")
    path = runs / run_id if isinstance(run_id, str) and run_id else None
    if ids and path is not None and (path / "run.json").is_file():
        taken = RunDir(path).info().get("taken", [])
        if isinstance(taken, list) and set(ids) <= {str(t) for t in taken}:
            backend.take(ids)  # recorded in the run: `prosec resume` serves them
    backend.put_value(inbox_claim_key(), None)
    return True


def queued_wakes(items: list[dict[str, Any]], nodes: Iterable[str]) -> list[QueuedWake]:
    """The drained inbox items for `nodes` (others belong to an older manifest), each
    checked: the inbox is stored state, and a malformed wake is a BackendError."""
    known = set(nodes)
    checked: list[QueuedWake] = []
    for item in items:
        node = str(item.get("node"))
        if node not in known:
            continue
        if not is_queued_wake(item):
            raise BackendError(f"a queued wake for {node!r} is malformed: {wake_problem(item)}")
        checked.append(item)
    return checked
