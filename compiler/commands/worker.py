"""`prosec worker`: render jobs from the PostgreSQL backend's queue (the `workers` extra),
and the `--workers N` option of `prosec run` / `trigger`."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import socket
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import click
from prosec.runtime.session import Project

from .errors import fail, user_errors
from .exitcodes import ExitCode
from .runtime_common import open_root, root_arg

__all__ = ["dispatching", "serve_root", "worker", "workers_options"]

LEASE = 30.0
ATTEMPTS = 3


def workers_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option(
        "--lease",
        type=click.FloatRange(min=0.5, max=3600),
        default=LEASE,
        show_default=True,
        help="With --workers: seconds without a worker's heartbeat before its job is "
        "given to another.",
    )(func)
    func = click.option(
        "--workers",
        type=click.IntRange(min=0, max=256),
        help="Render on workers (PostgreSQL backend; the `workers` extra): start N local "
        "`prosec worker`s (0: only workers started elsewhere).",
    )(func)
    return func


@contextlib.contextmanager
def dispatching(
    project: Project, workers: int | None, lease: float, renders: tuple[str, ...]
) -> Iterator[Any]:
    """The dispatch of `--workers N` (None without the flag), its workers stopped after."""
    if workers is None:
        yield None
        return
    if renders:
        fail("--render binds renders of this process only; workers bind theirs from prose.toml")
    from prosec.runtime.workers import require

    with user_errors():
        require(project.backend.name)
    from prosec.runtime.backends.postgres import PostgresBackend
    from prosec.runtime.workers.dispatch import Dispatcher
    from prosec.runtime.workers.local import LocalWorkers

    assert isinstance(project.backend, PostgresBackend)
    serve = functools.partial(serve_root, project.root, 1, lease, ATTEMPTS)
    forked = functools.partial(_forked_worker, serve=serve)
    local = LocalWorkers(project.root, workers, lease=lease, attempts=ATTEMPTS, forked=forked)
    local.start()  # now (forked, when it can be): their start-up overlaps the runner's own
    dispatcher = Dispatcher(
        project.backend, project.root, dict(os.environ), lease=lease, local=local
    )
    try:
        yield dispatcher
    finally:
        dispatcher.close()


@click.command("worker")
@root_arg
@click.option(
    "--concurrency",
    type=click.IntRange(min=1, max=256),
    default=1,
    show_default=True,
    help="Renders this worker runs at once.",
)
@click.option(
    "--lease",
    type=click.FloatRange(min=0.5, max=3600),
    default=LEASE,
    show_default=True,
    help="Heartbeat lease in seconds: after it, a silent worker's job goes to another.",
)
@click.option(
    "--attempts",
    type=click.IntRange(min=1, max=100),
    default=ATTEMPTS,
    show_default=True,
    help="Starts of one render before it is committed as failed (`worker-lost`).",
)
def worker(root: Path, concurrency: int, lease: float, attempts: int) -> None:
    """Render ready nodes that runners of ROOT enqueue (`prosec run --workers N`).

    Needs the PostgreSQL backend and `pip install 'prosec[workers]'`. Run it on any
    machine that reaches the database and holds the project's sources, compiled intent
    and renders; inputs and outputs travel through the database. Stops on SIGTERM or
    Ctrl-C after its running renders finish.
    """
    serve_root(root, concurrency, lease, attempts)
    # stopped cleanly: its jobs ended, connections and scratch closed. The interpreter's
    # teardown of a few hundred modules is ~0.1 s of CPU and ~0.25 s of wall time per
    # worker (`--workers 8` stops eight at once): skipped
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(ExitCode.OK)


def serve_root(root: Path, concurrency: int, lease: float, attempts: int) -> None:
    """The body of `prosec worker` (and of a local worker forked by the runner): open
    ROOT on PostgreSQL and take render jobs until stopped."""
    from prosec.runtime.workers import require

    with user_errors():
        project = open_root(root, "postgres")
        try:
            require(project.backend.name)
            project.bind_renders({})
        except BaseException:
            project.backend.close()
            raise
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(name)s: %(message)s"
    )
    logging.getLogger("prosec.workers").setLevel(logging.INFO)
    from prosec.runtime.workers.serve import serve_worker

    name = f"{socket.gethostname()}-{os.getpid()}"
    click.echo(
        f"prosec worker {name}: {project.backend.describe()}, concurrency {concurrency}", err=True
    )
    with user_errors():
        serve_worker(
            project,
            dict(os.environ),
            name=name,
            concurrency=concurrency,
            lease=lease,
            attempts=attempts,
        )


def _forked_worker(
    root: Path, log: int, *, serve: Callable[[], None]
) -> NoReturn:  # pragma: no cover
    """A local worker forked from the runner: its own session, output into its log, the
    default signal handlers (procrastinate installs its own), in ROOT, then `serve` until
    it is stopped; the child process ends here, whatever happens."""
    code: int = ExitCode.INTERNAL
    try:
        os.setsid()
        os.chdir(root)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        # as a spawned worker, it holds none of the runner's files: above all not its
        # database connection, whose session (and runner lock) must end with the runner
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        serve()
        code = ExitCode.OK
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else ExitCode.FINDINGS
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)
