"""Exit codes and the one error printer of every `prosec` command."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import click

from .exitcodes import ExitCode

__all__ = ["ExitCode", "fail", "report_error", "user_error_types", "user_errors"]


def fail(message: str) -> NoReturn:
    """Print `prosec: error: MESSAGE` on stderr and exit with ExitCode.USAGE."""
    click.echo(f"prosec: error: {message}", err=True)
    sys.exit(ExitCode.USAGE)


def report_error(message: str) -> None:
    """Print `prosec: error: MESSAGE` on stderr and go on (a command that reports each
    item it could not do, then exits with its own status)."""
    click.echo(f"prosec: error: {message}", err=True)


def user_error_types() -> tuple[type[Exception], ...]:
    """The exceptions that are the user's doing (a bad file, flag, setting or state), not
    prosec's: each one's message is the whole story.

    Imported when an exception is being matched, not before, so a command that never
    fails loads none of the runtime (`prosec lint FILE` stays fast).
    """
    from prosec.runtime.backends import BackendError
    from prosec.runtime.fsio import PathEscapeError
    from prosec.runtime.intent_check import IntentError
    from prosec.runtime.project_toml import ConfigError
    from prosec.runtime.receipts import LedgerError
    from prosec.runtime.renders import BindingError
    from prosec.runtime.session import SessionError
    from prosec.runtime.userjson import JSONInputError
    from prosec.runtime.vm.driver import VmError
    from prosec.runtime.vm.journal import JournalError

    from ..discover import DiscoveryError

    return (
        ConfigError,
        DiscoveryError,
        SessionError,
        IntentError,
        BackendError,
        BindingError,
        PathEscapeError,
        LedgerError,
        JSONInputError,
        VmError,
        JournalError,
        FileNotFoundError,
        PermissionError,
    )


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn a user error raised inside into `fail(message)`; anything else propagates (a
    bug: `main` reports it with ExitCode.INTERNAL)."""
    try:
        yield
    except Exception as exc:
        if isinstance(exc, user_error_types()):
            fail(str(exc))
        raise
