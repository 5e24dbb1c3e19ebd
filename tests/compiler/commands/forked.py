"""Run `prosec` as a real process cheaply: fork this (already imported) interpreter and
call the console-script entry point in the child, with its own working directory,
environment and standard streams, and a deadline (a child that blocks is killed)."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from prosec.compiler.cli import main

TIMEOUT = "timeout"


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the child ended: its exit code (or TIMEOUT) and what it printed."""

    code: int | str
    stdout: str
    stderr: str


def run_forked(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 20,
) -> Outcome:
    """`prosec ARGS` in a forked child; stdin is /dev/null."""
    with tempfile.TemporaryDirectory(prefix="prosec-forked-") as scratch:
        out_path, err_path = Path(scratch) / "out", Path(scratch) / "err"
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns to pytest
            _child(list(args), cwd, env, out_path, err_path)
        code = _wait(pid, timeout)
        return Outcome(
            code,
            out_path.read_text(encoding="utf-8", errors="replace"),
            err_path.read_text(encoding="utf-8", errors="replace"),
        )


def _child(
    args: list[str], cwd: Path, env: Mapping[str, str] | None, out: Path, err: Path
) -> None:  # pragma: no cover - runs in the forked child
    code = 99
    try:
        os.setsid()  # its own group: the parent kills everything it starts on a timeout
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
        os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8")
        os.chdir(cwd)
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:  # anything escaping main is reported as 98
        print(f"escaped main: {exc!r}", file=sys.stderr)
        code = 98
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # nothing left to report it to
                stream.flush()
        os._exit(code)


def _wait(pid: int, timeout: float) -> int | str:
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return TIMEOUT
        time.sleep(0.005)
