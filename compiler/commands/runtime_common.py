"""Options and helpers shared by the runtime commands (run, trigger, tick, resume, status,
inspect, receipts)."""

from __future__ import annotations

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
