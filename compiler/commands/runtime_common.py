"""Options and helpers shared by the runtime commands (run, trigger, tick, resume, status,
inspect, receipts)."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from prosec.runtime.session import Project, open_project

from .inputs import require_dir

__all__ = ["echo_json", "echo_text", "json_opt", "open_root", "root_arg", "root_opt"]


def open_root(root: Path, backend: str | None) -> Project:
    """ROOT's settings, active compiled intent and state backend; the backend may read
    its connection string from this process's environment. Exit 2 when ROOT is not a
    directory."""
    require_dir(root)
    return open_project(root, backend=backend, env=dict(os.environ))


def echo_json(data: Any) -> None:
    echo_text(json.dumps(data, indent=2, ensure_ascii=False))


def echo_text(text: str, *, err: bool = False) -> None:
    """Print text that may hold names read from disk: undecodable bytes (file names that
    are not UTF-8, lone surrogates) print as backslash escapes, never crash the output."""
    click.echo(text.encode("utf-8", "backslashreplace").decode("utf-8"), err=err)


def root_arg(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.argument("root", required=False, default=".", type=click.Path(path_type=Path))(
        func
    )


def root_opt(func: Callable[..., Any]) -> Callable[..., Any]:
    """An optional positional ROOT after the command's own arguments, with `--root ROOT` as
    an alias (the older spelling): `prosec trigger wire-feed ROOT --data …`."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        positional, option = kwargs.pop("root_pos"), kwargs.pop("root_opt")
        if positional is not None and option is not None and positional != option:
            raise click.UsageError(
                f"ROOT is given twice, as {positional} and as --root {option}: pass one"
            )
        kwargs["root"] = positional or option or Path(".")
        return func(*args, **kwargs)

    wrapper = click.option(
        "--root",
        "root_opt",
        default=None,
        type=click.Path(path_type=Path),
        help="The OpenProse root (the same as the ROOT argument).",
    )(wrapper)
    wrapper = click.argument(
        "root_pos", metavar="[ROOT]", required=False, type=click.Path(path_type=Path)
    )(wrapper)
    return wrapper


def json_opt(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")(func)
