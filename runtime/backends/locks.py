"""A non-blocking exclusive file lock (flock), released by the kernel if the holder dies."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

__all__ = ["FileLock"]


class FileLock:
    """`try_lock()` / `unlock()` on a lock file; the holder's pid is written into it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def try_lock(self) -> bool:
        if self._fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def unlock(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
