"""Group commit: the commits of a wave's renders made durable together.

On the filesystem backend one commit used to pay about fourteen fsyncs (version blob,
pending record, ledger, run ledger, published tree, log, clearing the record). A group
pays a fixed handful however many commits it holds, in this order:

1. **journal**: `state/commit-group.bin` (backends/fsjournal.py) holds every commit's
   write-ahead record (receipt, version, vm.log marker) and the version frames; it is
   written to a temp file, fsynced and renamed into place (fsync of `state/`). From
   here the whole group is committed: a crash at any later point is rolled forward.
2. **apply**, per commit, without fsync: version file, pending record, ledger append,
   run ledger append, published tree, the run's materialized copy, vm.log marker.
3. **sync**: one syncfs(2) of the filesystem makes everything applied durable.
4. **clear**: the pending records and the journal are removed, and a second syncfs makes
   that durable before the next group starts.

A crash before (1) loses only renders (they are redone); after it, the next runner's
`repair()` turns the journal into durable pending records and version files and the
usual roll-forward (`Project.recover`) finishes every commit, idempotently. Checkpoints
(crash points for tests) are called once per commit of the group at each step:
after-version, after-pending and after-journal once the journal is durable; after-ledger,
after-run-ledger, after-publish and after-log during apply; after-apply; after-sync.

Other backends commit each render on its own (commit.py): their stores have
transactions of their own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .backends.base import Backend
from .backends.filesystem import FilesystemBackend
from .backends.fsjournal import Frame, encode_journal
from .canonical import content_address, encode_frame
from .commit import commit_and_sign
from .fsio import sync_filesystem
from .protocol import PendingRecord, Receipt
from .runs import RunDir

__all__ = ["GROUP_POINTS", "Commit", "commit_group"]

# the crash points only a group commit has, in order (commit.py has the others)
GROUP_POINTS = ("after-journal", "after-apply", "after-sync")


@dataclass(frozen=True, slots=True, kw_only=True)
class Commit:
    """One receipt to commit, with the files it publishes (rendered only)."""

    node: str
    receipt: Receipt
    files: dict[str, bytes] | None
    marker: str


def commit_group(
    backend: Backend,
    run: RunDir,
    commits: Sequence[Commit],
    checkpoint: Callable[[str, str], None],
) -> dict[str, str | None]:
    """Commit every receipt of `commits` crash-safely; return each node's new version
    (None when it published nothing)."""
    if not isinstance(backend, FilesystemBackend) or len({c.node for c in commits}) < len(commits):
        return {
            c.node: commit_and_sign(backend, run, c.node, c.receipt, c.files, c.marker, checkpoint)
            for c in commits
        }
    if not commits:
        return {}
    records: list[PendingRecord] = []
    frames: list[Frame] = []
    addresses: dict[str, str | None] = {}
    for c in commits:
        address = None
        if c.files is not None:
            address = content_address(c.files)
            frames.append((c.node, address, encode_frame(c.files)))
        addresses[c.node] = address
        records.append(
            {"run_id": run.run_id, "receipt": c.receipt, "version": address, "marker": c.marker}
        )
    backend.write_journal(encode_journal(records, frames))
    _each(checkpoint, commits, "after-version", "after-pending", "after-journal")
    blobs = {(node, address): frame for node, address, frame in frames}
    for c, record in zip(commits, records, strict=True):
        address = record["version"]
        if c.files is not None and address is not None:
            backend.put_version(c.node, address, blobs[c.node, address], durable=False)
        backend.put_pending(c.node, record, durable=False)
        backend.append_receipt(run.run_id, c.receipt, durable=False)
        checkpoint("after-ledger", c.node)
        run.append_receipt(c.node, c.receipt, durable=False)
        checkpoint("after-run-ledger", c.node)
        if c.files is not None and address is not None:
            backend.set_published(c.node, address, c.files, durable=False)
            run.materialize(c.node, address, c.files)
            checkpoint("after-publish", c.node)
        run.log(c.marker, durable=False)
        checkpoint("after-log", c.node)
    _each(checkpoint, commits, "after-apply")
    _sync(backend, run)
    _each(checkpoint, commits, "after-sync")
    for c in commits:
        backend.clear_pending(c.node, durable=False)
    backend.drop_journal()
    _sync(backend, run)
    return addresses


def _sync(backend: FilesystemBackend, run: RunDir) -> None:
    """syncfs the state's filesystem, and the run's when it lives on another one."""
    backend.sync()
    if os.stat(run.path).st_dev != os.stat(backend.state).st_dev:
        sync_filesystem(run.path)


def _each(checkpoint: Callable[[str, str], None], commits: Sequence[Commit], *points: str) -> None:
    for point in points:
        for c in commits:
            checkpoint(point, c.node)
