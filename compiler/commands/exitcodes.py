"""What `prosec` exits with (apart from the error printer, so that `prosec --version`
answers without importing click)."""

from __future__ import annotations

import enum

__all__ = ["ExitCode"]


class ExitCode(enum.IntEnum):
    """What `prosec` exits with, the same for every command."""

    OK = 0
    FINDINGS = 1  # findings or failure: lint errors, a stale manifest, a failed render
    USAGE = 2  # a bad flag, file or setting; an unreadable or unwritable path
    INTERNAL = 3  # a bug in prosec
    INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as shells report it
