"""`prosec serve` and `prosec devtools`: the HTTP service and the browser devtools.

The work is in prosec.runtime.http (Starlette on uvicorn, the `serve` extra); this
module reads the options and the environment (tokens), refuses an unsafe bind, checks
that the project opens, and runs the server until SIGTERM or Ctrl-C. Exit codes: 0
after a graceful stop, 2 for bad options, a project that does not open, a missing extra
or a port that cannot be bound.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click
from prosec.runtime.backends import BACKEND_NAMES
from prosec.runtime.http import (
    DEFAULT_PORT,
    Auth,
    ServeSettings,
    file_clock,
    is_loopback,
    local_clock,
)

from .errors import ExitCode, fail, user_errors
from .inputs import finite_seconds, require_dir
from .runtime_common import root_arg

__all__ = ["devtools_command", "serve_command"]

TOKEN_ENV = "PROSEC_SERVE_TOKEN"
SECRET_ENV = "PROSEC_WEBHOOK_SECRET"
CLOCK_ENV = "PROSEC_CLOCK_FILE"  # tests: the cadence clock reads its time from this file
INSTALL = "pip install 'prosec[serve]'"


def _server_module() -> Any:
    try:
        from prosec.runtime.http import server
    except ImportError:
        fail(f"prosec serve and prosec devtools need the 'serve' extra: {INSTALL}")
    return server


def _auth(host: str) -> Auth:
    auth = Auth(
        token=os.environ.get(TOKEN_ENV) or None, webhook_secret=os.environ.get(SECRET_ENV) or None
    )
    if auth.open and not is_loopback(host):
        fail(
            f"--host {host}: binding beyond this machine needs a secret in the environment: "
            f"{TOKEN_ENV} (a bearer token for every request) and/or {SECRET_ENV} "
            "(HMAC-signed webhook triggers)"
        )
    return auth


def _run(settings: ServeSettings) -> None:
    server_module = _server_module()
    server = server_module.build_server(settings)
    server.run()
    if not server.started:
        fail(f"could not serve on {settings.host}:{settings.port} (see the log above)")
    sys.exit(ExitCode.OK)


def _port(port: int, host: str) -> int:
    return (
        port
        if port
        else int(_server_module().free_port(host if host != "localhost" else "127.0.0.1"))
    )


def _network_options(func: Any) -> Any:
    func = click.option(
        "--port",
        type=click.IntRange(0, 65535),
        default=DEFAULT_PORT,
        show_default=True,
        help="TCP port (0: any free port, shown in the log).",
    )(func)
    func = click.option(
        "--host",
        default="127.0.0.1",
        show_default=True,
        help=f"Address to bind; anything but loopback needs ${TOKEN_ENV} or ${SECRET_ENV}.",
    )(func)
    return func


@click.command("serve")
@root_arg
@_network_options
@click.option("--backend", type=click.Choice(BACKEND_NAMES), help="State backend ([run] backend).")
@click.option(
    "--render",
    "renders",
    multiple=True,
    metavar="NODE=KIND:VALUE",
    help="Bind a render (wins over prose.toml); NODE '*' binds the default.",
)
@click.option("--jobs", type=click.IntRange(min=1, max=1024), help="Renders in parallel.")
@click.option("--timeout", type=float, callback=finite_seconds, help="Seconds per render.")
@click.option(
    "--max-body",
    type=click.IntRange(min=1, max=1 << 30),
    default=1 << 20,
    show_default=True,
    help="Largest request body in bytes (larger: 413).",
)
@click.option(
    "--grace",
    type=float,
    default=10.0,
    show_default=True,
    callback=finite_seconds,
    help="On SIGTERM, seconds running renders may finish before they are stopped.",
)
@click.option(
    "--poll",
    type=float,
    default=0.5,
    show_default=True,
    callback=finite_seconds,
    help="Seconds between looks at the manifest, the inbox and the cadences.",
)
@click.option("--no-cadences", is_flag=True, help="Do not wake self-driven nodes on their cadence.")
def serve_command(
    root: Path,
    host: str,
    port: int,
    backend: str | None,
    renders: tuple[str, ...],
    jobs: int | None,
    timeout: float | None,
    max_body: int,
    grace: float,
    poll: float,
    no_cadences: bool,
) -> None:
    """Serve ROOT's active compiled intent over HTTP until SIGTERM or Ctrl-C.

    \b
    POST /trigger/GATEWAY   wake a gateway with the JSON body (202 + the run id)
    GET  /health /status /cost /runs /runs/ID /wakes/ID
    GET  /                  the devtools, live;   /docs   the API
    Self-driven nodes wake on their cadence; `prosec activate` reloads the
    manifest; wakes are queued durably and survive a restart. Binds 127.0.0.1
    unless --host says otherwise, which requires $PROSEC_SERVE_TOKEN (bearer)
    and/or $PROSEC_WEBHOOK_SECRET (HMAC-signed webhooks).
    """
    from prosec.runtime.renders import parse_cli_binding

    _server_module()
    require_dir(root)
    auth = _auth(host)
    bindings: dict[str, dict[str, Any]] = {}
    with user_errors():
        for text in renders:
            node, table = parse_cli_binding(text)
            bindings[node] = table
    clock_file = os.environ.get(CLOCK_ENV)
    settings = ServeSettings(
        root=root.resolve(),
        host=host,
        port=_port(port, host),
        backend=backend,
        renders=bindings,
        jobs=jobs,
        timeout=timeout,
        env=dict(os.environ),
        auth=auth,
        max_body=max_body,
        grace=grace if grace is not None else 10.0,
        poll=max(poll if poll is not None else 0.5, 0.05),
        clock=file_clock(Path(clock_file)) if clock_file else local_clock,
        cadences=not no_cadences,
    )
    from prosec.runtime.http.worker import open_bound

    with user_errors():
        project = open_bound(settings)  # fail now, with exit 2, rather than in the server
        project.backend.close()
    _run(settings)


@click.command("devtools")
@root_arg
@_network_options
@click.option("--backend", type=click.Choice(BACKEND_NAMES), help="State backend ([run] backend).")
def devtools_command(root: Path, host: str, port: int, backend: str | None) -> None:
    """Open ROOT in the browser devtools, read-only: a prosec project (its active
    compiled intent and state) or an upstream devtools state directory (receipts.json
    and world-models/). Nothing is run and nothing is written; `prosec serve` shows
    the same view live at `/`.
    """
    from prosec.runtime.devtools import FixtureError, FixtureState, is_fixture

    _server_module()
    require_dir(root)
    auth = _auth(host)
    root = root.resolve()
    with user_errors():
        if is_fixture(root):
            try:
                FixtureState(root)
            except FixtureError as exc:
                fail(str(exc))
        else:
            from prosec.runtime.session import open_project

            open_project(root, backend=backend, env=dict(os.environ)).backend.close()
    settings = ServeSettings(
        root=root,
        host=host,
        port=_port(port, host),
        backend=backend,
        env=dict(os.environ),
        auth=auth,
        devtools_only=True,
    )
    _run(settings)
