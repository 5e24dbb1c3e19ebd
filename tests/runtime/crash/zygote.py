"""A warm `prosec` for the crash-point sweep: started once with the interposer preloaded,
it imports prosec and then forks one child per command it reads (a JSON line on stdin),
so each command costs its work and not the interpreter's start-up. The child arms the
interposer (kill before the K-th mutating operation under ROOT; K = 0 only counts; K < 0
disarmed), runs the console-script entry point in its working directory and
environment, and the parent answers with a JSON line: the exit code (-9: killed) and the
operations counted."""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import io
import json
import os
import signal
import sys
import time
from typing import Any

from prosec.compiler.cli import LAZY_COMMANDS, main


def _warm() -> None:
    for target in LAZY_COMMANDS.values():
        importlib.import_module(target.partition(":")[0])
    for module in ("prosec.runtime.verify", "prosec.runtime.backends.sqlite"):
        importlib.import_module(module)


def _child(request: dict[str, Any], library: ctypes.CDLL | None) -> None:  # pragma: no cover
    code = 99
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
        os.dup2(os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8")
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if library is not None and request["k"] >= 0:
            library.prosec_kill_arm(request["k"], request["root"].encode(), request["tear"])
        main(request["args"])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:
        print(f"escaped main: {exc!r}", file=sys.stderr)
        code = 98
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        if library is not None and request.get("count"):
            with open(request["count"], "w", encoding="utf-8") as handle:
                handle.write(f"{library.prosec_kill_count()}\n")
        os._exit(code)


def _wait(pid: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return -1000
        time.sleep(0.002)


def serve() -> None:
    preload = os.environ.get("PROSEC_ZYGOTE_LIBRARY")
    library = ctypes.CDLL(preload) if preload else None
    if library is not None:
        library.prosec_kill_arm.argtypes = [ctypes.c_long, ctypes.c_char_p, ctypes.c_int]
        library.prosec_kill_count.restype = ctypes.c_long
    _warm()
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request, library)
        answers.write(json.dumps({"code": _wait(pid, request["timeout"])}) + "\n")
        answers.flush()


if __name__ == "__main__":
    serve()
