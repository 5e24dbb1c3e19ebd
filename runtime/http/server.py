"""Run the app on uvicorn: logging that never shows a secret, signals that stop gracefully.

SIGTERM and SIGINT stop accepting connections, end the event streams, let the run in
flight finish its commit (renders get the grace period), then exit 0. Log lines carry
the method, path and status only: request headers (where tokens and signatures travel)
are never logged.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from types import FrameType
from typing import Any

import uvicorn

from .app import create_app
from .settings import ServeSettings

__all__ = ["LOGGING", "Server", "build_server", "free_port"]

LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "stream": "ext://sys.stderr",
        },
    },
    "loggers": {
        "uvicorn": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "uvicorn.error": {"level": "INFO"},
        # "client - "METHOD /path HTTP/1.1" status": no headers, no body
        "uvicorn.access": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "prosec.serve": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
    },
}


class Server(uvicorn.Server):
    """uvicorn's server, whose stop also ends the app's event streams at once, and which
    returns after a graceful stop (uvicorn would raise the signal again: the process
    would die of it instead of exiting 0)."""

    on_exit: Callable[[], None] | None = None
    stop_signal: int | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        self._captured_signals.clear()
        self.stop_signal = sig
        if self.on_exit is not None:
            self.on_exit()


def build_server(settings: ServeSettings) -> Server:
    """A server for `settings` (call `.run()` in the main thread, or `.serve()`)."""
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_config=LOGGING,
        access_log=True,
        lifespan="on",
        server_header=False,
        # streams end at once; this bounds slow clients, the reconciler has its own grace
        timeout_graceful_shutdown=5,
        timeout_keep_alive=5,
    )
    server = Server(config)
    server.on_exit = app.state.server.events.close_threadsafe
    return server


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now (for tests and `--port 0`)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port
