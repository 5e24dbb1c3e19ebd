"""The Starlette application of `prosec serve` and `prosec devtools`.

Starts the reconciler thread on startup and stops it gracefully on shutdown (the run
in flight finishes its commit; renders get the grace period). Every response carries
conservative security headers; errors are JSON with a reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..backends import BackendError
from ..intent import IntentError
from ..session import SessionError
from . import api, devtools_api
from .openapi import docs_html, openapi
from .settings import ServeSettings
from .state import ServerState

__all__ = ["StartupError", "create_app"]

log = logging.getLogger("prosec.serve")


class StartupError(RuntimeError):
    """The project could not be opened for serving (the message says why)."""


class SecurityHeaders:
    """Adds headers that keep the pages from being framed or sniffed."""

    HEADERS = (
        (b"x-content-type-options", b"nosniff"),
        (b"x-frame-options", b"DENY"),
        (b"referrer-policy", b"no-referrer"),
        (
            b"content-security-policy",
            b"default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'",
        ),
    )

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *self.HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


async def _unavailable(request: Request, exc: Exception) -> Response:
    """The state cannot be read now (a broken manifest, an unreachable database)."""
    log.error("%s %s: %s", request.method, request.url.path, exc)
    return JSONResponse({"error": str(exc)}, status_code=503)


async def _openapi(request: Request) -> Response:
    return JSONResponse(openapi())


async def _docs(request: Request) -> Response:
    return HTMLResponse(docs_html())


def create_app(settings: ServeSettings) -> Starlette:
    """The app for `settings`; the reconciler starts with the app's lifespan."""
    state = ServerState(settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        state.events.bind(loop)
        worker = state.worker
        if worker is not None:
            worker.start()
            await loop.run_in_executor(None, worker.ready.wait, 120.0)
            if worker.failure is not None:
                raise StartupError(worker.failure)
        try:
            yield
        finally:
            state.events.close()
            if worker is not None:
                log.info("stopping: the run in flight finishes its commit")
                await loop.run_in_executor(None, worker.stop)
            await loop.run_in_executor(None, state.close)

    routes: list[Route | Mount] = [
        Route(path, endpoint, methods=methods)
        for path, endpoint, methods in [*api.routes(), *devtools_api.routes()]
    ]
    routes += [
        Route("/openapi.json", _openapi, methods=["GET"]),
        Route("/docs", _docs, methods=["GET"]),
        Mount("/static", StaticFiles(directory=devtools_api.STATIC), name="static"),
    ]
    unavailable = {kind: _unavailable for kind in (IntentError, BackendError, SessionError)}
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[Middleware(SecurityHeaders)],
        exception_handlers=unavailable,
    )
    app.state.server = state
    return app
