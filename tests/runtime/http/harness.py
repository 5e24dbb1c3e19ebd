"""Real servers for the HTTP tests: uvicorn in a thread, or `prosec serve` as a process.

Every server listens on 127.0.0.1 at a free port; every wait is bounded (`wait_until`
raises after its timeout), so a broken server fails a test instead of hanging it.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import httpx
from prosec.runtime.http import ServeSettings
from prosec.runtime.http.server import build_server, free_port

from ..project import PROSEC

T = TypeVar("T")


def wait_until(
    check: Callable[[], T | None], timeout: float = 20.0, interval: float = 0.05, what: str = ""
) -> T:
    """Poll `check` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or check}")
        time.sleep(interval)


class FakeClock:
    """An injectable cadence clock the test moves by hand."""

    def __init__(self, start: dt.datetime) -> None:
        self.now = start
        self._lock = threading.Lock()

    def __call__(self) -> dt.datetime:
        with self._lock:
            return self.now

    def advance(self, **delta: float) -> None:
        with self._lock:
            self.now += dt.timedelta(**delta)


@contextmanager
def running(settings: ServeSettings) -> Iterator[httpx.Client]:
    """uvicorn serving `settings` in a thread; a client for it; a graceful stop after."""
    settings = replace(settings, host="127.0.0.1", port=free_port())
    server = build_server(settings)
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    try:
        wait_until(lambda: server.started or not thread.is_alive(), timeout=30, what="startup")
        assert server.started, "the server did not start"
        base = f"http://127.0.0.1:{settings.port}"
        with httpx.Client(base_url=base, timeout=30) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(60)
        assert not thread.is_alive(), "the server did not stop"


def settings_for(root: Path, **changes: Any) -> ServeSettings:
    """Fast polling, a short acknowledgement window and no secrets, unless changed."""
    base = ServeSettings(root=root, poll=0.05, ack_wait=5.0, grace=5.0, env=dict(os.environ))
    return replace(base, **changes)


class ServeProcess:
    """`prosec serve` (or `devtools`) as a real process on a free port."""

    def __init__(
        self, root: Path, *args: str, env: dict[str, str] | None = None, command: str = "serve"
    ) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        full_env = {**os.environ, **(env or {})}
        full_env.pop("PROSEC_CRASH_AT", None)
        self.process = subprocess.Popen(
            [str(PROSEC), command, str(root), "--port", str(self.port), *args],
            cwd=root,
            env=full_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.output = ""

    def wait_ready(self, timeout: float = 60) -> ServeProcess:
        def up() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"prosec {self.process.args} exited: {self.finish()}")
            try:
                return httpx.get(self.base + "/health", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(up, timeout=timeout, interval=0.1, what="the server's /health")
        return self

    def client(self, **headers: str) -> httpx.Client:
        return httpx.Client(base_url=self.base, timeout=30, headers=headers)

    def terminate(self, timeout: float = 60) -> int:
        """SIGTERM, then wait (bounded); the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        self.finish(timeout)
        return int(self.process.returncode)

    def finish(self, timeout: float = 60) -> str:
        try:
            out, _ = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            out, _ = self.process.communicate(timeout=10)
        self.output += out or ""
        return self.output
