"""Server-sent events: the reconciler thread posts, every connected browser receives.

The reconciler runs in its own thread; `post` hands each message to the event loop
with `call_soon_threadsafe`, where every subscriber's bounded queue gets it (a slow
subscriber loses old messages, never blocks the reconciler).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from typing import Any

__all__ = ["Broadcaster", "sse"]

QUEUE_LIMIT = 256


def sse(event: str, data: Any) -> bytes:
    """One server-sent event (the data as one line of JSON)."""
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class Broadcaster:
    """Fan-out of messages from any thread to the subscribers on one event loop."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queues: set[asyncio.Queue[dict[str, Any]]] = set()
        self._lock = threading.Lock()
        self.closed = asyncio.Event()

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def post(self, message: dict[str, Any]) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(self._deliver, message)

    def _deliver(self, message: dict[str, Any]) -> None:
        for queue in list(self._queues):
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(message)

    def subscribe(self) -> asyncio.Queue[dict[str, Any]]:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(QUEUE_LIMIT)
        self._queues.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[dict[str, Any]]) -> None:
        self._queues.discard(queue)

    def close_threadsafe(self) -> None:
        """`close` from any thread or a signal handler."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.close)

    def close(self) -> None:
        """End every stream (the server is stopping)."""
        self.closed.set()
        self._deliver({"type": "closing"})
