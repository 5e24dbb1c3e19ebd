"""`--workers N`: N `prosec worker` processes on this machine for the runner's lifetime.

They are started with the runner (their start-up, a second or so of imports, overlaps
the runner's own), each writing its log to `runs/.workers/worker-{i}.log`, and stopped (SIGTERM,
then SIGKILL after a grace period) when the runner ends. They are ordinary workers: any
other `prosec worker` on the same database takes jobs too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

__all__ = ["LocalWorkers"]

_MAIN = "from prosec.compiler.cli import main; main()"


class LocalWorkers:
    def __init__(self, root: Path, count: int, *, lease: float, attempts: int) -> None:
        self.root = root
        self.count = count
        self.lease = lease
        self.attempts = attempts
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self) -> None:
        if self.procs or self.count <= 0:
            return
        for index in range(self.count):
            self.procs.append(self._spawn(index))

    def revive(self) -> list[int]:
        """Start again each local worker that died (SIGKILL, a crash); their indexes."""
        revived = []
        for index, proc in enumerate(self.procs):
            if proc.poll() is not None:
                self.procs[index] = self._spawn(index)
                revived.append(index)
        return revived

    def _spawn(self, index: int) -> subprocess.Popen[bytes]:
        logs = self.root / "runs" / ".workers"
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / f"worker-{index + 1}.log", "ab") as out:
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
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.procs.clear()
