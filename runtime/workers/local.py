"""`--workers N`: N `prosec worker` processes on this machine for the runner's lifetime.

They are started with the runner, each writing its log to `runs/.workers/worker-{i}.log`,
in a session of its own, and stopped (SIGTERM, then SIGKILL after a grace period) when
the runner ends. They are ordinary workers: any other `prosec worker` on the same
database takes jobs too.

Given `forked` (the forked child's body, from the CLI layer: it serves as `prosec
worker` does and ends the child process), the first N are forked from the runner
before it runs anything else: each starts with the runner's modules
already imported (a new Python process importing them costs ~0.3 s of CPU, which with
eight workers on two cores is seconds). The child never returns into the runner: it
serves and ends with `os._exit`, never touching what it inherited (the runner's
signal handlers, its buffered output, its database connection, whose file it closes,
so the runner's session and lock still end with the runner). A fork needs a process
with one thread (another thread could hold a lock the child would wait on forever) and
Linux; a worker that died is started again as a new process (by then the runner has
threads and connections of its own), as are all of them when forking is not possible.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

__all__ = ["LocalWorkers"]

_MAIN = "from prosec.compiler.cli import main; main()"


class _Forked:
    """A forked worker, with the part of `subprocess.Popen` LocalWorkers uses."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped already: gone, how is not known
                pid, status = self.pid, 255 << 8
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.001
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0.0)
            time.sleep(delay)
            delay = min(delay * 2, 0.02)
        assert self.returncode is not None
        return self.returncode


class LocalWorkers:
    def __init__(
        self,
        root: Path,
        count: int,
        *,
        lease: float,
        attempts: int,
        forked: Callable[[Path, int], NoReturn] | None = None,
    ) -> None:
        self.root = root
        self.count = count
        self.lease = lease
        self.attempts = attempts
        self.forked = forked
        self.procs: list[subprocess.Popen[bytes] | _Forked] = []

    def start(self) -> None:
        if self.procs or self.count <= 0:
            return
        fork = self.forked is not None and _can_fork()
        for index in range(self.count):
            self.procs.append(self._fork(index) if fork else self._spawn(index))

    def revive(self) -> list[int]:
        """Start again each local worker that died (SIGKILL, a crash); their indexes."""
        revived = []
        for index, proc in enumerate(self.procs):
            if proc.poll() is not None:
                self.procs[index] = self._spawn(index)
                revived.append(index)
        return revived

    def _log(self, index: int) -> Path:
        logs = self.root / "runs" / ".workers"
        logs.mkdir(parents=True, exist_ok=True)
        return logs / f"worker-{index + 1}.log"

    def _spawn(self, index: int) -> subprocess.Popen[bytes]:
        with open(self._log(index), "ab") as out:
            command = [
                sys.executable,
                "-c",
                _MAIN,
                "worker",
                str(self.root),
                "--concurrency",
                "1",
                "--lease",
                str(self.lease),
                "--attempts",
                str(self.attempts),
            ]
            return subprocess.Popen(
                command,
                cwd=self.root,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def _fork(self, index: int) -> _Forked:
        log = os.open(self._log(index), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        for stream in (sys.stdout, sys.stderr):  # else the child would repeat what is buffered
            stream.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child (its coverage is not collected)
            assert self.forked is not None
            self.forked(self.root, log)  # serves, then ends the child process: never returns
        os.close(log)
        return _Forked(pid)

    def pids(self) -> list[int]:
        return [proc.pid for proc in self.procs]

    def stop(self, grace: float = 10.0) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.procs.clear()


def _can_fork() -> bool:
    return sys.platform.startswith("linux") and threading.active_count() == 1
