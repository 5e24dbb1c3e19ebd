"""The HTTP layer of the runtime: `prosec serve` and `prosec devtools` (the `serve` extra).

This package's `__init__` imports neither Starlette nor uvicorn: `settings` and `auth`
are plain Python, so the CLI can build settings and say which extra is missing before
`prosec.runtime.http.server` (which needs them) is imported.
"""

from __future__ import annotations

from .auth import Auth, is_loopback, sign
from .settings import DEFAULT_PORT, ServeSettings, file_clock, local_clock

__all__ = [
    "DEFAULT_PORT",
    "Auth",
    "ServeSettings",
    "file_clock",
    "is_loopback",
    "local_clock",
    "sign",
]
