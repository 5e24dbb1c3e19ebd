"""The VM journal `runs/{id}/vm/journal.jsonl`: one fsynced line per completed step.

Each line is canonical JSON `{"seq", "key", "kind", "value", "prev"}`: `key` names the
step by its place in the execution (statement path, loop iteration, block invocation),
`kind` is `call`, `session`, `answer` (a discretion question's recorded answer), `bind`
(a caller input) or `done` (a statement that completed), and `prev` is the SHA-256 of
the previous line's bytes (`null` for the first), so the journal is append-only and
verified on load: a line edited, removed or reordered breaks the chain. A torn last line
(an append a crash cut) is dropped on open.

A live run journals parallel branches in the order they complete. A replay knows the
recorded order (`order`, the keys of the replayed journal): a step recorded ahead of its
turn is held until every step before it is written, so the replay's journal is the
original's byte for byte.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..canonical import canonical_json
from ..fsio import append_line, repair_torn_tail
from ..userjson import JSONInputError, loads

__all__ = ["JOURNAL", "Journal", "JournalError"]

JOURNAL = Path("vm") / "journal.jsonl"


class JournalError(ValueError):  # a user error: the run's files were damaged
    """A journal that does not verify (names the file and line)."""


class Journal:
    """Append-only, hash-chained record of completed steps, safe across threads."""

    def __init__(self, path: Path, entries: list[dict[str, Any]], head: str | None) -> None:
        self.path = path
        self.on_record: Callable[[int], None] = lambda seq: None  # tests: crash points
        self.entries = entries
        self._by_key = {str(e["key"]): e for e in entries}
        self._head = head
        self._lock = threading.Lock()
        self._order: dict[str, int] = {}  # a replay: the recorded position of each key
        self._sequence: list[str] = []  # ... and the keys in that order
        self._held: dict[str, dict[str, Any]] = {}  # recorded ahead of their turn

    def follow(self, order: list[str]) -> None:
        """Write the lines in this order of keys (a replay's recorded order)."""
        with self._lock:
            self._order = {key: index for index, key in enumerate(order)}
            self._sequence = list(order)

    @classmethod
    def open(cls, path: Path) -> Journal:
        repair_torn_tail(path)
        entries: list[dict[str, Any]] = []
        head: str | None = None
        if path.is_file():
            for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
                where = f"{path}:{number}"
                try:
                    entry = loads(raw, source=where)
                except JSONInputError as exc:
                    raise JournalError(f"{where}: not a journal line ({exc})") from None
                if not isinstance(entry, dict) or entry.get("seq") != number:
                    raise JournalError(f"{where}: expected step {number}")
                if entry.get("prev") != head:
                    raise JournalError(f"{where}: the chain is broken (prev does not match)")
                if not isinstance(entry.get("key"), str) or "value" not in entry:
                    raise JournalError(f"{where}: a step needs a key and a value")
                entries.append(entry)
                head = hashlib.sha256(raw).hexdigest()
        return cls(path, entries, head)

    def get(self, key: str) -> Mapping[str, Any] | None:
        with self._lock:
            found = self._by_key.get(key)
            if found is None and key in self._held:
                return {"key": key, **self._held[key]}
            return found

    def record(self, key: str, kind: str, value: Any) -> None:
        with self._lock:
            if key in self._by_key or key in self._held:
                return
            turn = self._order.get(key)
            if turn is None or turn <= len(self.entries):
                self._write(key, kind, value)
            else:
                self._held[key] = {"kind": kind, "value": value}
            while self._held:  # the held steps whose turn has come
                turn = len(self.entries)
                following = self._sequence[turn] if turn < len(self._sequence) else None
                if following is None or following not in self._held:
                    break
                held = self._held.pop(following)
                self._write(following, str(held["kind"]), held["value"])

    def _write(self, key: str, kind: str, value: Any) -> None:
        entry = {
            "seq": len(self.entries) + 1,
            "key": key,
            "kind": kind,
            "value": value,
            "prev": self._head,
        }
        line = canonical_json(entry)
        append_line(self.path, line)
        self._head = hashlib.sha256(line).hexdigest()
        self.entries.append(entry)
        self._by_key[key] = entry
        self.on_record(len(self.entries))

    def flush(self) -> None:
        """Write the steps still held (a replay that ended, or failed, before their turn)."""
        with self._lock:
            for key in sorted(self._held, key=lambda k: self._order.get(k, 0)):
                held = self._held.pop(key)
                self._write(key, str(held["kind"]), held["value"])

    def keys(self) -> list[str]:
        with self._lock:
            return [str(e["key"]) for e in self.entries]

    def effects(self) -> dict[str, Any]:
        """Every recorded call, session, resume and answer by key (what a replay
        reproduces; bound inputs are the replay's own)."""
        with self._lock:
            return {str(e["key"]): e["value"] for e in self.entries if e.get("kind") != "bind"}
