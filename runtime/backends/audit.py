"""A store's raw durable records, read-only, for `prosec receipts verify`.

Every durable backend can be opened as a `StoreAudit`: its ledgers, version blobs,
published versions and write-ahead records exactly as stored, unchecked, each with the
place it came from (a file, or a table and row). `runtime/verify_store.py` runs the
same checks over all of them, so a tampered SQLite row or PostgreSQL row is found as
surely as a tampered file. Opening an audit never creates or changes anything.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..userjson import JSONInputError, loads

__all__ = ["StoreAudit", "StoredLedger", "StoredPublished", "StoredVersion", "pending_head"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredLedger:
    """One node's durable receipt chain as stored: a JSON Lines file's bytes (`data`),
    or a table's rows (`rows`: each line with its place, such as `id 7`, and `columns`:
    the values the row keeps beside the line, projections that must agree with it)."""

    node: str
    file: str
    data: bytes = b""
    rows: tuple[tuple[str, bytes], ...] | None = None
    columns: tuple[Mapping[str, Any], ...] = ()
    problem: str | None = None  # the ledger could not be read at all


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredVersion:
    """One stored version blob (None when its row or file holds no bytes)."""

    node: str | None
    address: str
    frame: bytes | None
    file: str
    position: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredPublished:
    """A node's published version; `files` when the store keeps the files themselves."""

    node: str
    address: str
    file: str
    position: str
    files: Mapping[str, bytes] | None = None
    problem: str | None = None  # the published files could not be read


class StoreAudit(Protocol):
    """Read-only access to every durable record of one store."""

    where: str  # a human label with no secrets ("state/prosec.db", "postgres:openprose")

    def ledgers(self) -> Iterator[StoredLedger]: ...

    def versions(self) -> Iterator[StoredVersion]: ...

    def has_version(self, node: str, address: str) -> bool: ...

    def frame(self, node: str, address: str) -> bytes | None: ...

    def published(self) -> Iterator[StoredPublished]: ...

    def pending_heads(self) -> dict[str, str | None]:
        """Node → the content_hash of its write-ahead receipt (None when unreadable)."""
        ...

    def close(self) -> None: ...


def pending_head(record: bytes) -> str | None:
    """The content_hash of the receipt in a stored write-ahead record (None when the
    record is not readable as one)."""
    try:
        value = loads(record, source="pending record")
    except JSONInputError:
        return None
    receipt = value.get("receipt") if isinstance(value, dict) else None
    stated = receipt.get("content_hash") if isinstance(receipt, dict) else None
    return stated if isinstance(stated, str) else None
