"""prose.lock: one `host/owner/repo sha` line per dependency, `#` comments, written sorted.

The lock is committed (reproducible installs); deps/ is a cache rebuilt from it. Reading
is strict (a bad line is an error naming its line), writing is deterministic and atomic.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from prosec.runtime.fsio import atomic_write_bytes

LOCK_NAME = "prose.lock"
HEADER = (
    "# prose.lock: the commit of every dependency, direct and transitive (`prosec install`).\n"
    "# Commit this file; deps/ is rebuilt from it. Edit only to choose a version yourself.\n"
)
_REPO = re.compile(
    r"[a-z0-9.-]+\.[a-z0-9.:-]+/[A-Za-z0-9_][A-Za-z0-9._~+-]*/[A-Za-z0-9_][A-Za-z0-9._~+-]*"
)
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_LIMIT = 4 << 20  # bytes of a prose.lock


class LockError(ValueError):
    """prose.lock cannot be read or has a malformed line (exit 2)."""


@dataclass(frozen=True, slots=True)
class Lock:
    """The pinned commit of each `host/owner/repo`."""

    entries: Mapping[str, str]

    def text(self) -> str:
        """The file's content: the header, then one line per entry, sorted."""
        lines = "".join(f"{repo} {self.entries[repo]}\n" for repo in sorted(self.entries))
        return HEADER + lines


def parse_lock(text: str, where: str = LOCK_NAME) -> Lock:
    entries: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2 or not _REPO.fullmatch(parts[0]) or not _SHA.fullmatch(parts[1]):
            raise LockError(
                f"{where}:{number}: expected `host/owner/repo <full commit sha>`, found {line!r}"
            )
        repo, sha = parts
        if repo in entries and entries[repo] != sha:
            raise LockError(f"{where}:{number}: {repo} is pinned twice, at different commits")
        entries[repo] = sha
    return Lock(entries=entries)


def read_lock(root: Path) -> Lock | None:
    """ROOT/prose.lock, None when there is none; LockError when it is unreadable or bad."""
    path = root / LOCK_NAME
    if not os.path.lexists(path):
        return None
    try:
        if not path.is_file():
            raise LockError(f"{path}: not a regular file")
        data = path.read_bytes()[: _LIMIT + 1]
    except OSError as exc:
        raise LockError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > _LIMIT:
        raise LockError(f"{path}: larger than {_LIMIT} bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LockError(f"{path}: not UTF-8 (byte {exc.start})") from None
    return parse_lock(text, str(path))


def locked(root: Path) -> dict[str, str]:
    """The lock's entries for messages (empty when the lock is absent or unreadable)."""
    try:
        lock = read_lock(root)
    except LockError:
        return {}
    return dict(lock.entries) if lock is not None else {}


def write_lock(root: Path, lock: Lock) -> bool:
    """Write ROOT/prose.lock atomically when its content changes; True when written."""
    path = root / LOCK_NAME
    data = lock.text().encode("utf-8")
    try:
        if path.is_file() and path.read_bytes() == data:
            return False
    except OSError:
        pass
    atomic_write_bytes(path, data)
    return True
