"""The service endpoints: trigger a gateway, and read health, status, cost, runs, wakes.

`POST /trigger/{gateway}` queues the wake durably (the backend's inbox) before it
answers 202, so an acknowledged wake survives a crash. When the reconciler is idle it
takes the wake at once and the answer names the run (waiting at most `ack_wait`
seconds for that); a wake that arrives during a run is answered at once as `queued`:
it joins that run's next wave or the next run, coalesced with the wakes queued
meanwhile, and `GET /wakes/{id}` names its run later.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .. import serve
from ..backends import UnstorableError
from ..costs import cost_summary
from ..inspection import inspect_run, status
from ..runs import RUN_ID, RunDir, runs_in_order
from ..session import Project, SessionError
from ..userjson import JSONInputError, loads
from .state import ServerState

__all__ = ["BodyTooLarge", "error", "read_body", "routes"]


class BodyTooLarge(Exception):
    """The request body is over the server's limit."""


def error(status_code: int, message: str, **headers: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status_code, headers=headers or None)


def unauthorized() -> JSONResponse:
    return error(401, "missing or wrong credentials", **{"WWW-Authenticate": "Bearer"})


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused past `limit` bytes (by its Content-Length or as it streams)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def _state(request: Request) -> ServerState:
    state: ServerState = request.app.state.server
    return state


def authorized(request: Request) -> bool:
    return _state(request).settings.auth.bearer_ok(request.headers)


async def health(request: Request) -> Response:
    """Liveness: always 200 while the server runs (no credentials needed)."""
    state = _state(request)
    worker = state.worker
    return JSONResponse(
        {
            "ok": worker is None or (worker.is_alive() and worker.failure is None),
            "mode": "devtools" if worker is None else "serve",
        }
    )


async def trigger(request: Request) -> Response:
    """Queue an external wake of a gateway with the JSON body as its data."""
    state = _state(request)
    settings = state.settings
    worker = state.worker
    if worker is None:
        return error(405, "this server is read-only (prosec devtools)")
    gateway = request.path_params["gateway"]
    if not settings.auth.may_trigger(request.headers):
        return unauthorized()
    try:
        body = await read_body(request, settings.max_body)
    except BodyTooLarge:
        return error(413, f"the body is larger than {settings.max_body} bytes")
    if not settings.auth.trigger_ok(request.headers, body):
        return unauthorized()
    try:
        value = loads(body, source="")
    except JSONInputError as exc:
        return error(400, f"malformed JSON: {exc}")
    wake_id = secrets.token_hex(8)
    waiter = worker.book.add(wake_id, {"gateway": gateway})

    def enqueue(project: Project) -> tuple[int, str]:
        missing = gateway not in project.intent.nodes
        try:
            return 202, serve.enqueue_trigger(project, gateway, value, wake_id=wake_id)
        except SessionError as exc:
            return (404 if missing else 422), str(exc).removeprefix("trigger: ")
        except UnstorableError as exc:  # refused before it is acknowledged
            return 422, str(exc)

    code, fingerprint = await state.read(enqueue)
    if code != 202:
        worker.book.forget(wake_id)
        return error(code, fingerprint)
    busy = worker.in_flight is not None
    worker.poke()
    if not busy:  # an idle reconciler takes the wake at once: name its run
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.wrap_future(waiter), settings.ack_wait)
    record = worker.book.get(wake_id) or {"state": "queued", "run_id": None}
    return JSONResponse(
        {
            "wake_id": wake_id,
            "gateway": gateway,
            "token": fingerprint,
            "state": record["state"],
            "run_id": record["run_id"],
        },
        status_code=202,
        headers={"Location": f"/wakes/{wake_id}"},
    )


async def wake(request: Request) -> Response:
    """Where a wake this server queued is: queued, running (in a run), done."""
    if not authorized(request):
        return unauthorized()
    state = _state(request)
    wake_id = request.path_params["wake_id"]
    record = state.worker.book.get(wake_id) if state.worker else None
    if record is None or record["state"] == "queued":
        # after a restart, or taken by another runner (a `prosec run` from a shell)
        found = await state.off_loop(lambda: _find_wake(state.settings.root, wake_id))
        if found is not None:
            record = {**(record or {}), **found}
        elif record is None:
            return error(404, f"no wake {wake_id!r} is known to this server or its last runs")
    return JSONResponse({"wake_id": wake_id, **record})


def _find_wake(root: Path, wake_id: str) -> dict[str, Any] | None:
    for run in reversed(runs_in_order(root / "runs")[-200:]):
        try:
            wakes = run.info().get("wakes", [])
        except (OSError, ValueError):
            continue
        if any(isinstance(w, dict) and w.get("id") == wake_id for w in wakes):
            state = "done" if run.finished() else "interrupted"
            return {"state": state, "run_id": run.run_id}
    return None


async def status_view(request: Request) -> Response:
    """The runtime's belief (node heads, recent runs) and the server's own state."""
    if not authorized(request):
        return unauthorized()
    state = _state(request)
    data = await state.read(lambda p: status(p.root, p.intent, p.backend))
    worker = state.worker
    if worker is not None:
        data["server"] = {
            "in_flight": worker.in_flight,
            "queued": worker.book.queued(),
            "generation": worker.generation,
            "reload_error": worker.reload_error,
            "last_run": worker.last_run,
            "cadence_ticks": dict(sorted(worker.ticks.items())),
            "auth": "open" if state.settings.auth.open else "required",
        }
    return JSONResponse(data)


async def cost_view(request: Request) -> Response:
    """Fresh vs reused tokens by node and by surprise cause."""
    if not authorized(request):
        return unauthorized()

    def summary(project: Project) -> dict[str, Any]:
        chains = [r for n in project.intent.order for r in project.backend.ledger(n)]
        return cost_summary(chains, project.intent.order)

    return JSONResponse(await _state(request).read(summary))


async def runs_view(request: Request) -> Response:
    """The most recent runs, newest first (`?limit=`, at most 500)."""
    if not authorized(request):
        return unauthorized()
    text = request.query_params.get("limit", "50")
    if not text.isdigit() or not 1 <= int(text) <= 500:
        return error(400, "limit must be a whole number from 1 to 500")
    limit = int(text)
    root = _state(request).settings.root

    def listing() -> list[dict[str, Any]]:
        out = []
        for run in reversed(runs_in_order(root / "runs")[-limit:]):
            try:
                info = run.info()
            except (OSError, ValueError):
                info = {}
            out.append(
                {
                    "run_id": run.run_id,
                    "kind": info.get("kind"),
                    "state": run.finished() or "interrupted",
                    "wakes": len(info.get("wakes", [])),
                    "started_ns": info.get("started_ns"),
                }
            )
        return out

    return JSONResponse({"runs": await _state(request).off_loop(listing)})


async def run_view(request: Request) -> Response:
    """What one run did, event by event (as `prosec inspect RUN --json`)."""
    if not authorized(request):
        return unauthorized()
    run_id = request.path_params["run_id"]
    root = _state(request).settings.root
    path = root / "runs" / run_id
    if not RUN_ID.match(run_id) or not path.is_dir():
        return error(404, f"no run {run_id!r}")
    return JSONResponse(await _state(request).off_loop(lambda: inspect_run(RunDir(path).path)))


def routes() -> list[tuple[str, Any, list[str]]]:
    return [
        ("/health", health, ["GET"]),
        ("/status", status_view, ["GET"]),
        ("/cost", cost_view, ["GET"]),
        ("/runs", runs_view, ["GET"]),
        ("/runs/{run_id}", run_view, ["GET"]),
        ("/wakes/{wake_id}", wake, ["GET"]),
        ("/trigger/{gateway}", trigger, ["POST"]),
    ]
