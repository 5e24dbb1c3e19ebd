"""State backends: one Protocol (base.py), one conformance suite, several stores.

`open_backend(name, root, env)` builds a backend by name: `filesystem` (default,
under ROOT/state/), `sqlite` (ROOT/state/prosec.db), `postgres` (the server named by
OPENPROSE_POSTGRES_URL, never printed) and `in-context` (memory only).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .base import Backend, BackendError, ChainError

__all__ = ["Backend", "BackendError", "ChainError", "open_backend"]


def open_backend(name: str, root: Path, env: Mapping[str, str] | None = None) -> Backend:
    """Open the named backend for an OpenProse root."""
    if name == "filesystem":
        from .filesystem import FilesystemBackend

        return FilesystemBackend(root / "state")
    if name == "sqlite":
        from .sqlite import SqliteBackend

        return SqliteBackend(root / "state" / "prosec.db")
    if name == "postgres":
        try:
            from .postgres import PostgresBackend
        except ModuleNotFoundError as exc:  # psycopg comes with the `postgres` extra
            if (exc.name or "").partition(".")[0] != "psycopg":
                raise
            raise BackendError(
                "the PostgreSQL backend needs the 'postgres' extra: pip install 'prosec[postgres]'"
            ) from None

        return PostgresBackend.from_env(root, env or {})
    if name == "in-context":
        from .incontext import InContextBackend

        return InContextBackend()
    raise BackendError(f"unknown backend {name!r}")
