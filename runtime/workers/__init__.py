"""Renders on many machines: `prosec worker` processes that share the PostgreSQL
backend's database, through procrastinate (the `workers` extra).

The runner (`prosec run --workers N`) decides what is ready exactly as it does alone
(executor.py, reconciler.py) and, instead of rendering a wave itself, enqueues one render
job per ready node (jobs.py, queue.py); a worker (worker.py) renders it from versions it
reads out of the database and commits the receipt in one transaction that checks the
node's head (`prev == head`), so two workers rendering one node never both commit; the
runner hears each commit (LISTEN/NOTIFY) and settles it into its run (dispatch.py).
local.py starts and stops the local workers `--workers N` asks for.

This package imports procrastinate only inside its modules: `require()` says what to
install when it is missing.
"""

from __future__ import annotations

from ..backends.base import BackendError

__all__ = ["INSTALL", "WorkersUnavailable", "require"]

INSTALL = "pip install 'prosec[workers]'"


class WorkersUnavailable(BackendError):
    """Workers were asked for where they cannot run (the extra is missing, or the backend
    is not PostgreSQL); the message says what to do."""


def require(backend_name: str) -> None:
    """Refuse, with what to do, when workers cannot run here."""
    try:
        import procrastinate  # noqa: F401
    except ImportError:
        raise WorkersUnavailable(
            f"workers need the procrastinate package, which is not installed: {INSTALL}"
        ) from None
    if backend_name != "postgres":
        raise WorkersUnavailable(
            f"workers share the PostgreSQL backend's database; this project's backend is "
            f'{backend_name} (use --backend postgres, or [run] backend = "postgres")'
        )
