"""A raw LSP client: bytes to the real `prosec lsp` process, every message it writes back
parsed with its arrival time. For the tests a well-behaved client (pytest-lsp) cannot
write: frames with a wrong `Content-Length`, bodies that are not JSON, bad params."""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...conftest import prosec_bin

Message = dict[str, Any]


def frame(body: bytes | str | Message, length: int | str | None = None) -> bytes:
    """One base-protocol frame; `length` overrides the true Content-Length."""
    if isinstance(body, dict):
        body = json.dumps(body)
    data = body.encode() if isinstance(body, str) else body
    return f"Content-Length: {len(data) if length is None else length}\r\n\r\n".encode() + data


def request(msg_id: int, method: str, params: Any = None) -> Message:
    message: Message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Any = None) -> Message:
    message: Message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


class RawServer:
    """`prosec lsp ARGS` with a reader thread collecting (arrival time, message)."""

    def __init__(self, *args: str, cwd: Path | None = None) -> None:
        self.process = subprocess.Popen(
            [prosec_bin(), "lsp", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
        )
        self.received: list[tuple[float, Message]] = []
        self._arrivals: queue.Queue[None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = stream.read(1)
                if not byte:
                    return
                header += byte
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            body = stream.read(length)
            self.received.append((time.perf_counter(), json.loads(body)))
            self._arrivals.put(None)

    def send(self, *items: bytes | Message) -> float:
        """Write frames (a dict is framed correctly); returns the time of the write."""
        assert self.process.stdin is not None
        data = b"".join(item if isinstance(item, bytes) else frame(item) for item in items)
        self.process.stdin.write(data)
        self.process.stdin.flush()
        return time.perf_counter()

    def wait(self, match: Callable[[Message], bool], timeout: float = 30) -> tuple[float, Message]:
        """The first message (from the start) that matches, with its arrival time."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for arrived, message in self.received[seen:]:
                if match(message):
                    return arrived, message
            seen = len(self.received)
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching message within {timeout}s: {self.received}")
            with contextlib.suppress(queue.Empty):
                self._arrivals.get(timeout=left)

    def reply(self, msg_id: int | None, timeout: float = 30) -> Message:
        return self.wait(lambda m: "method" not in m and m.get("id") == msg_id, timeout)[1]

    def initialize(self, root: Path) -> None:
        params = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        self.send(request(1, "initialize", params))
        assert "result" in self.reply(1)
        self.send(notification("initialized", {}))

    def close(self, timeout: float = 30) -> int:
        """shutdown, exit, and the exit status (the process is killed if it hangs)."""
        try:
            self.send(request(9999, "shutdown"), notification("exit"))
            self.reply(9999, timeout)
            assert self.process.stdin is not None
            self.process.stdin.close()
            return self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()

    def logs(self) -> list[str]:
        return [
            m["params"]["message"]
            for _, m in self.received
            if m.get("method") == "window/logMessage"
        ]
