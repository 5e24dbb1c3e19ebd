"""The devtools endpoints: the page, its assets, the scene, the inspector, live events.

The page and its assets are the package's own files (no CDN, no build step). Data
needs the bearer token when one is configured. `GET /api/events` streams server-sent
events: after each commit the steps past the browser's cursor, after a reload the
whole scene; it ends when the client goes or the server stops.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse

from ..devtools.scene import (
    Inspector,
    Scene,
    fixture_contract,
    fixture_scene,
    project_contract,
    project_scene,
)
from ..session import Project
from .api import error, unauthorized
from .events import sse
from .state import ServerState

__all__ = ["STATIC", "routes"]

STATIC = Path(__file__).resolve().parent.parent / "devtools" / "static"
HEARTBEAT = 10.0  # seconds between keep-alive comments on an idle stream


def _state(request: Request) -> ServerState:
    state: ServerState = request.app.state.server
    return state


def _authorized(request: Request) -> bool:
    return _state(request).settings.auth.bearer_ok(request.headers)


async def page(request: Request) -> Response:
    """The devtools page (static; it asks for a token when the data needs one)."""
    return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8")


async def _scene(state: ServerState) -> Scene:
    fixture = state.fixture
    if fixture is not None:
        return await state.off_loop(lambda: fixture_scene(fixture))
    live = state.worker is not None
    return await state.read(lambda p: project_scene(p, live=live))


async def _inspector(state: ServerState) -> Inspector:
    fixture = state.fixture
    if fixture is not None:
        scene = await state.off_loop(lambda: fixture_scene(fixture))
        return Inspector(scene, fixture, fixture_contract(fixture))

    def build(project: Project) -> Inspector:
        return Inspector(project_scene(project), project.backend, project_contract(project))

    return await state.read(build)


async def scene_view(request: Request) -> Response:
    """The topology (with its SVG drawing) and every receipt on the timeline."""
    if not _authorized(request):
        return unauthorized()
    return JSONResponse((await _scene(_state(request))).to_json())


async def node_view(request: Request) -> Response:
    """A node's contract, receipts, published version and versions."""
    if not _authorized(request):
        return unauthorized()
    state = _state(request)
    name = request.path_params["node"]
    inspector = await _inspector(state)
    info = await state.off_loop(lambda: inspector.node(name))
    return JSONResponse(info) if info is not None else error(404, f"no node {name!r}")


async def artifact_view(request: Request) -> Response:
    """The files of one version of a node, as text."""
    if not _authorized(request):
        return unauthorized()
    state = _state(request)
    name, address = request.path_params["node"], request.path_params["address"]
    inspector = await _inspector(state)
    files = await state.off_loop(lambda: inspector.artifact(name, address))
    if files is None:
        return error(404, f"no version {address!r} of {name!r}")
    return JSONResponse({"node": name, "version": address, "files": files})


async def diff_view(request: Request) -> Response:
    """The diff between two versions of a node (`?old=&new=` content addresses)."""
    if not _authorized(request):
        return unauthorized()
    state = _state(request)
    name = request.path_params["node"]
    old, new = request.query_params.get("old", ""), request.query_params.get("new", "")
    if not old or not new:
        return error(400, "name both versions: ?old=sha256:...&new=sha256:...")
    inspector = await _inspector(state)
    diff = await state.off_loop(lambda: inspector.diff(name, old, new))
    if diff is None:
        return error(404, f"{name!r} has no such pair of versions")
    return JSONResponse(diff)


async def events_view(request: Request) -> Response:
    """Server-sent events: `steps` (new receipts past `?since=`), `scene` (after a
    reload), `status` (runs starting and ending, cadence ticks, errors)."""
    if not _authorized(request):
        return unauthorized()
    text = request.query_params.get("since", "0")
    if not text.isdigit():
        return error(400, "since must be a whole number of steps")
    state = _state(request)
    return StreamingResponse(
        _stream(request, state, int(text)),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _stream(request: Request, state: ServerState, since: int) -> AsyncIterator[bytes]:
    queue = state.events.subscribe()
    try:
        scene = await _scene(state)
        yield sse("hello", {"steps": len(scene.steps), "live": scene.live})
        cursor, known = since, None
        while True:
            steps = scene.steps
            follows = cursor <= len(steps) and (
                cursor == 0 or known is None or steps[cursor - 1].hash == known
            )
            if not follows:
                yield sse("scene", scene.to_json())  # the history changed under the browser
            elif cursor < len(steps):
                yield sse("steps", {"from": cursor, "steps": _steps(scene, cursor)})
            cursor, known = len(steps), steps[-1].hash if steps else None
            message = await _next(request, state, queue)
            while message is not None and message.get("type") in ("run", "tick", "error"):
                yield sse("status", message)
                if message.get("type") == "run":
                    break
                message = await _next(request, state, queue)
            if message is None:
                return
            if message.get("type") == "reload":
                scene = await _scene(state)
                yield sse("scene", scene.to_json())
                cursor, known = len(scene.steps), scene.steps[-1].hash if scene.steps else None
                continue
            scene = await _scene(state)
    finally:
        state.events.unsubscribe(queue)


async def _next(
    request: Request, state: ServerState, queue: asyncio.Queue[dict[str, Any]]
) -> dict[str, Any] | None:
    """The next message worth a look; None when the stream should end. Idle streams
    get a keep-alive comment (sent by the caller as nothing: the loop just goes on)."""
    while not state.events.closed.is_set():
        try:
            message = await asyncio.wait_for(queue.get(), HEARTBEAT)
        except TimeoutError:
            if await request.is_disconnected():
                return None
            continue
        if message.get("type") == "closing":
            return None
        return message
    return None


def _steps(scene: Scene, start: int) -> list[dict[str, Any]]:
    return [step.to_json() for step in scene.steps[start:]]


def routes() -> list[tuple[str, Any, list[str]]]:
    return [
        ("/", page, ["GET"]),
        ("/api/scene", scene_view, ["GET"]),
        ("/api/events", events_view, ["GET"]),
        ("/api/nodes/{node}", node_view, ["GET"]),
        ("/api/nodes/{node}/versions/{address}", artifact_view, ["GET"]),
        ("/api/nodes/{node}/diff", diff_view, ["GET"]),
    ]
