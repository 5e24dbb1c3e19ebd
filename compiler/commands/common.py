"""Options and helpers shared by the CLI subcommands."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from .. import config as config_mod
from ..diagnostics import CODES

F = TypeVar("F", bound=Callable[..., Any])


def _split_codes(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[str, ...] | None:
    if not values:
        return None
    codes = tuple(code.strip() for value in values for code in value.split(",") if code.strip())
    for code in codes:
        pattern = code[:-1] if code.endswith("*") else None
        known = any(c.startswith(pattern) for c in CODES) if pattern is not None else code in CODES
        if not known:
            raise click.BadParameter(f"unknown diagnostic code {code!r}", ctx=ctx, param=param)
    return codes


def codes_option(name: str, help_text: str) -> Callable[[F], F]:
    return click.option(name, multiple=True, metavar="CODES", callback=_split_codes, help=help_text)


def load_config(start: Path) -> config_mod.Config:
    """The project config for `start`, or exit 2 naming the file and setting."""
    try:
        return config_mod.load(start if start.exists() else Path.cwd())
    except config_mod.ConfigError as exc:
        exit_usage(str(exc))


def exit_usage(message: str) -> NoReturn:
    click.echo(f"prosec: error: {message}", err=True)
    sys.exit(2)
