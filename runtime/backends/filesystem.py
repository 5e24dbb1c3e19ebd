"""The filesystem backend (default): durable state under ROOT/state/.

```
state/
  .lock                                 runner lock (flock; released by the kernel on crash)
  inbox/*.json                          wakes queued while a runner held the lock
  kv/{key}.json                         caller inputs, last trigger data, cadence clocks
  world-model/{node}/
    published/ (+ .version)             the current committed artifact
    versions/sha256_<hex>.bin           every committed version, as its OPWM1 frame
    receipts.jsonl                      the node's durable receipt chain
    pending.json                        only mid-commit: the write-ahead record
  commit-group.bin                      only mid-group-commit: the group's journal
```
"""

from __future__ import annotations

import contextlib
import gc
import os
import secrets
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..canonical import canonical_json, content_address, sha256_token
from ..fsio import (
    PathEscapeError,
    append_line,
    atomic_write_bytes,
    fsync_dir,
    is_leftover,
    read_tree,
    repair_torn_tail,
    replace_dir,
    safe_name,
    sync_filesystem,
)
from ..protocol import PendingRecord, Receipt
from ..receipts import LedgerError, load_ledger
from ..reconciler import NodeHead
from ..userjson import JSONInputError, read_limited
from .audit import StoredLedger, StoredPublished, StoredVersion, pending_head
from .base import BackendError, heads_from_ledger, stored_json, verified_line
from .fsjournal import JOURNAL, decode_journal
from .locks import FileLock

if TYPE_CHECKING:
    from .sqlstate import SqlState

__all__ = ["FilesystemAudit", "FilesystemBackend"]


_SPARE = 64 << 20  # bytes a derived cache leaves free on the state's filesystem


def _room(path: Path, size: int) -> bool:
    """Whether a derived cache of `size` bytes fits and still leaves `_SPARE` free."""
    info = os.statvfs(path)
    return info.f_bavail * info.f_frsize >= _SPARE + size


def _stamp(path: Path) -> tuple[int, ...]:
    """What tells one state of a file from another without reading it (() if absent)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return ()
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class FilesystemBackend:
    """State as files; every write atomic, every append fsynced."""

    name = "filesystem"
    ephemeral = False
    run_state: SqlState | None = None

    def __init__(self, state: Path) -> None:
        self.state = state
        self._lock = FileLock(state / ".lock")
        self._heads: dict[str, str | None] = {}

    def describe(self) -> str:
        return f"filesystem ({self.state})"

    # -- lock -------------------------------------------------------------------------

    def try_lock(self) -> bool:
        return self._lock.try_lock()

    def unlock(self) -> None:
        self._lock.unlock()

    # -- ledger -----------------------------------------------------------------------

    def _node_dir(self, node: str) -> Path:
        return self.state / "world-model" / safe_name(node, "node name")

    def ledger(self, node: str) -> list[Receipt]:
        try:
            # a torn last line was never committed: leave it out; `repair` cuts it off
            path = self._node_dir(node) / "receipts.jsonl"
            return load_ledger(path, node=node, torn_ok=True)
        except LedgerError as exc:
            raise BackendError(f"durable ledger of {node!r} cannot be trusted: {exc}") from exc

    def heads(self, nodes: Iterable[str]) -> dict[str, NodeHead]:
        """Each node's head, from its verified chain. A chain verified before whose file
        is the same file unchanged since (inode, size, mtime and ctime: any write moves
        ctime) is not read again: its head is kept in `state/.cache/heads.json` (plain JSON:
        a cache must never be able to run code)."""
        out: dict[str, NodeHead] = {}
        kept = self._kept_heads()
        fresh: dict[str, tuple[tuple[int, ...], NodeHead]] = {}
        for node in nodes:
            stamp = _stamp(self._node_dir(node) / "receipts.jsonl")
            entry = kept.get(node)
            if stamp and entry is not None and entry[0] == stamp:
                out[node] = entry[1]
            else:
                out[node] = heads_from_ledger(self.ledger(node))
            if stamp:
                fresh[node] = (stamp, out[node])
            self._heads[node] = out[node].hash
        if fresh != kept:
            with contextlib.suppress(OSError, TypeError, orjson.JSONEncodeError):
                data = orjson.dumps(
                    {
                        node: [list(st), head.last, head.last_ok]
                        for node, (st, head) in fresh.items()
                    }
                )
                if _room(self.state, len(data)):  # never the last bytes durable state needs
                    atomic_write_bytes(self._heads_cache, data, durable=False)  # derived
        return out

    @property
    def _heads_cache(self) -> Path:
        return self.state / ".cache" / "heads.json"

    def _kept_heads(self) -> dict[str, tuple[tuple[int, ...], NodeHead]]:
        paused = gc.isenabled()
        gc.disable()  # many young objects, no cycles: the collector would walk them
        try:
            raw = orjson.loads(self._heads_cache.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return {}
        finally:
            if paused:
                gc.enable()
        kept: dict[str, tuple[tuple[int, ...], NodeHead]] = {}
        if not isinstance(raw, dict):
            return kept
        for node, entry in raw.items():  # anything unexpected: that node is read afresh
            if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], list)):
                continue
            stamp, last, last_ok = entry
            if not all(type(part) is int for part in stamp):
                continue
            if all(item is None or isinstance(item, dict) for item in (last, last_ok)):
                kept[node] = (tuple(stamp), NodeHead(last=last, last_ok=last_ok))
        return kept

    def _current_head(self, node: str) -> str | None:
        if node not in self._heads:
            receipts = self.ledger(node)
            self._heads[node] = receipts[-1]["content_hash"] if receipts else None
        return self._heads[node]

    def repair(self) -> list[str]:
        """Turn a group-commit journal a crash left into durable pending records and
        version files (recovery rolls them forward), then cut the torn last lines
        interrupted appends left in durable ledgers (the receipt, if it was being
        committed, is in pending.json and is appended again by recovery); one message per
        ledger repaired."""
        self._unpack_journal()
        messages = []
        base = self.state / "world-model"
        for directory in sorted(base.iterdir()) if base.is_dir() else []:
            ledger = directory / "receipts.jsonl"
            removed = repair_torn_tail(ledger)
            if not removed:
                continue
            self._heads.pop(directory.name, None)
            pending = (directory / "pending.json").is_file()
            fate = (
                "its pending commit is applied again"
                if pending
                else "no pending commit held it: that receipt was never committed"
            )
            messages.append(
                f"repaired {ledger}: cut a torn last line ({removed} bytes) an interrupted "
                f"append left; {fate}"
            )
        return messages

    def _unpack_journal(self) -> None:
        path = self.state / JOURNAL
        if not path.is_file():
            return
        records, frames = decode_journal(path.read_bytes(), str(path))
        for node, address, frame in frames:
            version = self._version_path(node, address)
            if not (version.is_file() and sha256_token(version.read_bytes()) == address):
                atomic_write_bytes(version, frame)  # a group's apply is not synced yet
        for record in records:
            self.put_pending(str(record["receipt"]["node"]), record)
        path.unlink()
        fsync_dir(self.state)

    def append_receipt(self, run_id: str, receipt: Receipt, *, durable: bool = True) -> None:
        node = str(receipt["node"])
        line = verified_line(receipt, self._current_head(node))
        append_line(self._node_dir(node) / "receipts.jsonl", line, durable=durable)
        self._heads[node] = str(receipt["content_hash"])

    # -- group commit (runtime/groupcommit.py) ------------------------------------------

    def write_journal(self, data: bytes) -> None:
        """Durably write the group-commit journal: the group's commit point."""
        atomic_write_bytes(self.state / JOURNAL, data)

    def drop_journal(self) -> None:
        (self.state / JOURNAL).unlink(missing_ok=True)

    def sync(self) -> None:
        """Make every unsynced write of a group commit durable (one syncfs)."""
        sync_filesystem(self.state)

    # -- versions ---------------------------------------------------------------------

    def _version_path(self, node: str, address: str) -> Path:
        hexdigest = address.removeprefix("sha256:")
        if len(hexdigest) != 64 or not all(c in "0123456789abcdef" for c in hexdigest):
            raise BackendError(f"{address!r} is not a sha256 content address")
        return self._node_dir(node) / "versions" / f"sha256_{hexdigest}.bin"

    def put_version(
        self,
        node: str,
        address: str,
        frame: bytes,
        *,
        run_id: str | None = None,
        durable: bool = True,
    ) -> None:
        if sha256_token(frame) != address:
            raise BackendError(f"version of {node!r} does not hash to {address}")
        path = self._version_path(node, address)
        if not path.exists():
            atomic_write_bytes(path, frame, durable=durable)

    def get_version(self, node: str, address: str) -> bytes:
        path = self._version_path(node, address)
        try:
            frame = path.read_bytes()
        except FileNotFoundError as exc:
            raise BackendError(f"version {address} of {node!r} is missing") from exc
        if sha256_token(frame) != address:
            raise BackendError(f"version file {path} is corrupt (hash mismatch)")
        return frame

    def published_version(self, node: str) -> str | None:
        marker = self._node_dir(node) / "published" / ".version"
        return marker.read_text(encoding="utf-8").strip() if marker.exists() else None

    def set_published(
        self, node: str, address: str, files: Mapping[str, bytes], *, durable: bool = True
    ) -> None:
        target = self._node_dir(node) / "published"
        if self.published_version(node) == address and self._published_intact(target, address):
            return
        replace_dir(target, {**files, ".version": address.encode() + b"\n"}, durable=durable)

    def _published_intact(self, target: Path, address: str) -> bool:
        """Whether published/ holds exactly `address` (a group commit's unsynced publish
        a crash cut can leave the right `.version` beside damaged files)."""
        try:
            files = read_tree(target)
        except (OSError, PathEscapeError):
            return False
        files.pop(".version", None)
        try:
            return content_address(files) == address
        except ValueError:
            return False

    # -- key/value, pending, inbox --------------------------------------------------------

    def _kv_path(self, key: str) -> Path:
        return self.state / "kv" / f"{safe_name(key, 'state key')}.json"

    def get_value(self, key: str) -> Any | None:
        path = self._kv_path(key)
        if not path.exists():
            return None
        stored = stored_json(path.read_bytes(), str(path))
        if not isinstance(stored, dict) or "value" not in stored:
            raise BackendError(f"{path} cannot be trusted: not a stored value")
        return stored["value"]

    def put_value(self, key: str, value: Any) -> None:
        atomic_write_bytes(self._kv_path(key), canonical_json({"value": value}))

    def put_pending(self, node: str, record: PendingRecord, *, durable: bool = True) -> None:
        path = self._node_dir(node) / "pending.json"
        atomic_write_bytes(path, canonical_json(dict(record)), durable=durable)

    def pendings(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        base = self.state / "world-model"
        if not base.exists():
            return out
        for path in sorted(base.glob("*/pending.json")):
            out[path.parent.name] = stored_json(path.read_bytes(), str(path))
        return out

    def clear_pending(self, node: str, *, durable: bool = True) -> None:
        path = self._node_dir(node) / "pending.json"
        if path.exists():
            path.unlink()
            if durable:
                fsync_dir(path.parent)

    def enqueue(self, wake: Mapping[str, Any]) -> None:
        name = f"{time.time_ns():020d}-{secrets.token_hex(3)}.json"
        atomic_write_bytes(self.state / "inbox" / name, canonical_json(dict(wake)))

    def inbox(self) -> list[tuple[str, dict[str, Any]]]:
        inbox = self.state / "inbox"
        if not inbox.exists():
            return []
        return [
            (path.stem, stored_json(path.read_bytes(), str(path)))
            for path in sorted(inbox.glob("*.json"))
        ]

    def take(self, ids: Sequence[str]) -> None:
        inbox = self.state / "inbox"
        for wake_id in ids:
            (inbox / f"{safe_name(wake_id, 'inbox id')}.json").unlink(missing_ok=True)
        if ids:
            fsync_dir(inbox)

    def close(self) -> None:
        self.unlock()


class FilesystemAudit:
    """The durable records under a `state/` folder, read-only (`prosec receipts verify`)."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self.where = str(state)
        base = state / "world-model"
        self._nodes = sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []

    def ledgers(self) -> Iterator[StoredLedger]:
        for directory in self._nodes:
            path = directory / "receipts.jsonl"
            if not path.exists() and not path.is_symlink():
                continue
            try:
                data = read_limited(path, _NO_LIMIT)
            except JSONInputError as exc:
                yield StoredLedger(node=directory.name, file=str(path), data=b"", problem=str(exc))
                continue
            yield StoredLedger(node=directory.name, file=str(path), data=data)

    def versions(self) -> Iterator[StoredVersion]:
        for directory in self._nodes:
            folder = directory / "versions"
            if not folder.is_dir():
                continue
            for path in sorted(folder.iterdir()):
                if is_leftover(path.name):  # an interrupted write's temp file: no version
                    continue
                name = path.name
                address = (
                    "sha256:" + name[7:-4]
                    if name.startswith("sha256_") and name.endswith(".bin")
                    else name
                )
                try:
                    frame: bytes | None = read_limited(path, _NO_LIMIT)
                except JSONInputError:
                    frame = None
                yield StoredVersion(
                    node=directory.name, address=address, frame=frame, file=str(path), position="0"
                )

    def _version_file(self, node: str, address: str) -> Path:
        hexdigest = address.removeprefix("sha256:")
        return self.state / "world-model" / node / "versions" / f"sha256_{hexdigest}.bin"

    def has_version(self, node: str, address: str) -> bool:
        return self._version_file(node, address).is_file()

    def frame(self, node: str, address: str) -> bytes | None:
        try:
            return read_limited(self._version_file(node, address), _NO_LIMIT)
        except JSONInputError:
            return None

    def published(self) -> Iterator[StoredPublished]:
        for directory in self._nodes:
            folder = directory / "published"
            if not folder.exists() and not folder.is_symlink():
                continue
            marker = folder / ".version"
            try:
                address = read_limited(marker, 1 << 10).decode("utf-8").strip()
            except (JSONInputError, UnicodeDecodeError) as exc:
                yield StoredPublished(
                    node=directory.name,
                    address="",
                    file=str(folder),
                    position=".version",
                    problem=f".version cannot be read: {exc}",
                )
                continue
            try:
                files: dict[str, bytes] | None = read_tree(folder)
                problem = None
            except (OSError, PathEscapeError) as exc:
                files, problem = None, str(exc)
            if files is not None:
                files.pop(".version", None)
            yield StoredPublished(
                node=directory.name,
                address=address,
                file=str(folder),
                position=".version",
                files=files,
                problem=problem,
            )

    def pending_heads(self) -> dict[str, str | None]:
        heads: dict[str, str | None] = {}
        for directory in self._nodes:
            path = directory / "pending.json"
            if path.exists() or path.is_symlink():
                try:
                    heads[directory.name] = pending_head(read_limited(path, _NO_LIMIT))
                except JSONInputError:
                    heads[directory.name] = None
        return heads

    def close(self) -> None:
        return None


_NO_LIMIT = 1 << 62
