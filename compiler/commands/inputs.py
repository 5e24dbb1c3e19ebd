"""Command-line inputs checked at the door: the one place a command turns a path, a JSON
value or a number the user typed into something safe to use, or exits 2 naming it.

Files are read through the runtime's `userjson` reader: regular files only (a FIFO or a
device would block, `/dev/zero` never ends), with a size cap; JSON is strict (no NaN or
Infinity, no `1e400`, no 5,000-digit integers, no nesting past `MAX_DEPTH`).
"""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path
from typing import Any

import click
from prosec.runtime.userjson import JSONInputError, loads, read_limited

from .errors import fail

__all__ = [
    "DATA_LIMIT",
    "MANIFEST_LIMIT",
    "finite_seconds",
    "load_data",
    "open_log",
    "parse_json",
    "read_input",
    "require_dir",
]

DATA_LIMIT = 16 << 20  # --data @FILE
MANIFEST_LIMIT = 256 << 20  # a compiled intent handed to validate, activate, graph


def _describe(path: Path) -> str | None:
    """Why `path` is not an existing directory (None when it is one)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "a broken symlink" if path.is_symlink() else "no such directory"
    except OSError as exc:
        return exc.strerror or str(exc)
    return None if stat.S_ISDIR(mode) else "not a directory"


def require_dir(path: Path, what: str = "") -> None:
    """Exit 2 unless `path` is an existing directory (symlinks followed)."""
    problem = _describe(path)
    if problem is not None:
        fail(f"{what + ' ' if what else ''}{path}: {problem}")


def read_input(path: Path, limit: int, what: str = "") -> bytes:
    """The bytes of a regular file of at most `limit` bytes, or exit 2 naming it."""
    name = f"{what} {path}" if what else str(path)
    try:
        return read_limited(path, limit, what=name)
    except JSONInputError as exc:
        fail(str(exc))


def parse_json(data: bytes | str, source: str) -> Any:
    """Strict JSON, or exit 2 naming the source and the place."""
    try:
        return loads(data, source=source)
    except JSONInputError as exc:
        fail(str(exc))


def load_data(text: str) -> Any:
    """`--data JSON` or `--data @FILE` (a regular file of at most DATA_LIMIT bytes)."""
    if text.startswith("@"):
        path = Path(text[1:])
        return parse_json(read_input(path, DATA_LIMIT, "--data"), f"--data {text}")
    return parse_json(text, "--data")


def open_log(path: Path, what: str) -> Any:
    """A log file opened for appending (created when missing): a regular file only, so a
    FIFO never blocks the server and a directory never crashes it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        fail(f"{what} {path}: cannot open: {exc.strerror or exc}")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        fail(f"{what} {path}: not a regular file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "a", encoding="utf-8")


def finite_seconds(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """A click callback: a finite number of seconds greater than zero (`nan` and `inf`
    are refused: a timeout of either would never fire)."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise click.BadParameter(
            f"{value!r} is not a finite number greater than 0", ctx=ctx, param=param
        )
    return value
