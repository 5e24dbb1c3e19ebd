"""How one `prosec serve` / `prosec devtools` server is configured (the CLI fills it)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .auth import Auth

__all__ = ["DEFAULT_PORT", "ServeSettings", "file_clock", "local_clock"]

DEFAULT_PORT = 8321


def local_clock() -> dt.datetime:
    """Now, in this machine's time zone (a cron cadence is read in it)."""
    return dt.datetime.now().astimezone()


def file_clock(path: Path) -> Callable[[], dt.datetime]:
    """A clock that reads an ISO 8601 time from `path` at every call (tests move it by
    rewriting the file); the local clock while the file is missing or unreadable."""

    def now() -> dt.datetime:
        try:
            text = path.read_text(encoding="utf-8").strip()
            value = dt.datetime.fromisoformat(text)
        except (OSError, ValueError):
            return local_clock()
        return value if value.tzinfo else value.astimezone()

    return now


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeSettings:
    """Everything a server needs; secrets only inside `auth`."""

    root: Path
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    backend: str | None = None
    renders: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    jobs: int | None = None
    timeout: float | None = None
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    auth: Auth = field(default_factory=Auth)
    max_body: int = 1 << 20  # bytes of one request body
    grace: float = 10.0  # seconds a stop waits for running renders before killing them
    poll: float = 0.5  # seconds between looks at the manifest, the inbox and the cadences
    ack_wait: float = 2.0  # seconds a trigger waits to learn the run that took its wake
    clock: Callable[[], dt.datetime] = local_clock
    cadences: bool = True
    devtools_only: bool = False  # `prosec devtools`: read-only, no reconciler
