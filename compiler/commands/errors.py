"""Exit codes and the one error printer of every `prosec` command."""

from __future__ import annotations

import enum
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import click

__all__ = ["ExitCode", "fail", "user_error_types", "user_errors"]


class ExitCode(enum.IntEnum):
    """What `prosec` exits with, the same for every command."""

    OK = 0
    FINDINGS = 1  # findings or failure: lint errors, a stale manifest, a failed render
    USAGE = 2  # a bad flag, file or setting; an unreadable or unwritable path
    INTERNAL = 3  # a bug in prosec
    INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as shells report it


def fail(message: str) -> NoReturn:
    """Print `prosec: error: MESSAGE` on stderr and exit with ExitCode.USAGE."""
    click.echo(f"prosec: error: {message}", err=True)
    sys.exit(ExitCode.USAGE)


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
