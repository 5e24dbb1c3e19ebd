"""Shared pieces of the runtime CLI: exit codes, user-error handling, common options."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import click

from .backends import BackendError
from .config import ConfigError
from .fsio import PathEscapeError
from .intent import IntentError
from .receipts import LedgerError
from .renders import BindingError
from .session import SessionError

__all__ = [
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "USER_ERRORS",
    "fail",
    "json_opt",
    "root_arg",
    "root_opt",
    "user_errors",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
USER_ERRORS = (
    SessionError,
    IntentError,
    ConfigError,
    BackendError,
    BindingError,
    PathEscapeError,
    LedgerError,
    FileNotFoundError,
    PermissionError,
)


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    click.echo(f"prosec: error: {message}", err=True)
    sys.exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    try:
        yield
    except USER_ERRORS as exc:
        fail(str(exc))


def root_arg(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.argument("root", required=False, default=".", type=click.Path(path_type=Path))(
        func
    )


def root_opt(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--root",
        "root",
        default=".",
        type=click.Path(path_type=Path),
        show_default=True,
        help="The OpenProse root.",
    )(func)


def json_opt(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")(func)
