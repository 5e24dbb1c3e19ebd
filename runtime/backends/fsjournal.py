"""The filesystem backend's group-commit journal `state/commit-group.bin`.

One file holds the write-ahead records of every commit of a group (a wave's renders)
and the version frames they publish, so one durable write (temp file, fsync, rename,
fsync of `state/`) makes the whole group committed. Layout:

```
OPCG1\\n
{"frames": [[node, address, length], ...], "records": [PendingRecord, ...]}\\n
frame bytes, concatenated in the order of "frames"
```

The header is canonical JSON; every frame must hash to its address. The journal exists
only between a group's durable write and the filesystem sync after its apply
(runtime/groupcommit.py); the next runner's `repair()` turns one a crash left into
per-node pending records and version files and removes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..canonical import canonical_json, sha256_token
from ..protocol import PendingRecord, is_pending_record, pending_problem
from .base import BackendError, stored_json

__all__ = ["JOURNAL", "Frame", "decode_journal", "encode_journal"]

JOURNAL = "commit-group.bin"
_MAGIC = b"OPCG1\n"

Frame = tuple[str, str, bytes]  # node, content address, OPWM1 frame


def encode_journal(records: Sequence[PendingRecord], frames: Sequence[Frame]) -> bytes:
    header = {
        "records": [dict(record) for record in records],
        "frames": [[node, address, len(frame)] for node, address, frame in frames],
    }
    return b"".join([_MAGIC, canonical_json(header), b"\n", *(frame for _, _, frame in frames)])


def decode_journal(data: bytes, where: str) -> tuple[list[PendingRecord], list[Frame]]:
    """The records and frames of a journal; BackendError when anything does not check
    (the journal was written whole and renamed into place: damage is not a crash's)."""
    if not data.startswith(_MAGIC):
        raise BackendError(f"{where} cannot be trusted: not a commit-group journal")
    end = data.find(b"\n", len(_MAGIC))
    if end < 0:
        raise BackendError(f"{where} cannot be trusted: its header is cut")
    header: Any = stored_json(data[len(_MAGIC) : end], where)
    if not isinstance(header, dict) or not isinstance(header.get("records"), list):
        raise BackendError(f"{where} cannot be trusted: a malformed header")
    records: list[PendingRecord] = []
    for record in header["records"]:
        if not is_pending_record(record):
            raise BackendError(f"{where} holds a malformed record: {pending_problem(record)}")
        records.append(record)
    frames: list[Frame] = []
    position = end + 1
    for item in header.get("frames", []):
        if not (isinstance(item, list) and len(item) == 3 and isinstance(item[2], int)):
            raise BackendError(f"{where} cannot be trusted: a malformed frame entry")
        node, address, length = str(item[0]), str(item[1]), item[2]
        frame = data[position : position + length]
        position += length
        if len(frame) != length or sha256_token(frame) != address:
            raise BackendError(f"{where} cannot be trusted: frame {address} of {node!r} is damaged")
        frames.append((node, address, frame))
    if position != len(data):
        raise BackendError(f"{where} cannot be trusted: bytes after its last frame")
    return records, frames
