"""The backend registry: every state store by name, with the factory that opens it for an
OpenProse root. The one list of backend names (the CLI's choices, prose.toml's
`[run] backend`); a factory imports its store only when called, so choosing the
filesystem never imports psycopg."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType

from .base import Backend, BackendError

__all__ = ["BACKEND_NAMES", "DEFAULT_BACKEND", "REGISTRY", "Factory", "open_backend"]

Factory = Callable[[Path, Mapping[str, str]], Backend]


def _state(root: Path) -> Path:
    """ROOT/state/, which a durable local backend keeps (BackendError when a file sits
    there instead of a folder)."""
    state = root / "state"
    if (state.exists() or state.is_symlink()) and not state.is_dir():
        raise BackendError(f"{state}: not a directory (the state folder of the project)")
    return state


def _filesystem(root: Path, env: Mapping[str, str]) -> Backend:
    from .filesystem import FilesystemBackend

    return FilesystemBackend(_state(root))


def _sqlite(root: Path, env: Mapping[str, str]) -> Backend:
    from .sqlite import SqliteBackend

    return SqliteBackend(_state(root) / "prosec.db", runs=root / "runs")


def _postgres(root: Path, env: Mapping[str, str]) -> Backend:
    try:
        from .postgres import PostgresBackend
    except ModuleNotFoundError as exc:  # psycopg comes with the `postgres` extra
        if (exc.name or "").partition(".")[0] != "psycopg":
            raise
        raise BackendError(
            "the PostgreSQL backend needs the 'postgres' extra: pip install 'prosec[postgres]'"
        ) from None

    return PostgresBackend.from_env(root, env)


def _in_context(root: Path, env: Mapping[str, str]) -> Backend:
    from .incontext import InContextBackend

    return InContextBackend()


REGISTRY: Mapping[str, Factory] = MappingProxyType(
    {
        "filesystem": _filesystem,  # default, embedded: ROOT/state/
        "sqlite": _sqlite,  # one file: ROOT/state/prosec.db
        "postgres": _postgres,  # shared: $OPENPROSE_POSTGRES_URL, never printed
        "in-context": _in_context,  # memory only
    }
)
BACKEND_NAMES: tuple[str, ...] = tuple(REGISTRY)
DEFAULT_BACKEND = "filesystem"


def open_backend(name: str, root: Path, env: Mapping[str, str] | None = None) -> Backend:
    """Open the named backend for an OpenProse root (BackendError for an unknown name)."""
    factory = REGISTRY.get(name)
    if factory is None:
        raise BackendError(f"unknown backend {name!r} (one of {', '.join(BACKEND_NAMES)})")
    return factory(root, env or {})
