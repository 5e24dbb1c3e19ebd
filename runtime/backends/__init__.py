"""State backends: one Protocol (base.py), one registry (registry.py), one conformance
suite, several stores.

`open_backend(name, root, env)` builds a backend by name: `filesystem` (default,
under ROOT/state/), `sqlite` (ROOT/state/prosec.db), `postgres` (the server named by
OPENPROSE_POSTGRES_URL, never printed) and `in-context` (memory only, `ephemeral`).
"""

from __future__ import annotations

from .base import Backend, BackendError, ChainError, UnstorableError
from .registry import BACKEND_NAMES, DEFAULT_BACKEND, REGISTRY, open_backend

__all__ = [
    "BACKEND_NAMES",
    "DEFAULT_BACKEND",
    "REGISTRY",
    "Backend",
    "BackendError",
    "ChainError",
    "UnstorableError",
    "open_backend",
]
