"""`prosec run | trigger | tick | resume | status | inspect | receipts`: the runtime CLI.

Exit codes: 0 ok, 1 a render failed or verification found problems, 2 usage or I/O
error (bad flags, missing manifest, unreadable state, lock held), 3 internal error.
The runtime CLI modules (cli*.py) and compiler/cli.py are the only readers of os.environ.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from .backends import BACKEND_NAMES
from .canonical import token
from .cli_common import EXIT_FAILED, EXIT_OK
from .cli_common import fail as _fail
from .cli_common import json_opt as _json_opt
from .cli_common import root_arg as _root_arg
from .cli_common import root_opt as _root_opt
from .cli_common import user_errors as _user_errors
from .executor import EngineOptions, Event, RunSummary
from .reconciler import Wake
from .renders import parse_cli_binding
from .runs import RunDir, resolve_run
from .session import Project, open_project
from .terminal import Progress

CRASH_POINTS = (
    "after-render",
    "after-version",
    "after-pending",
    "after-ledger",
    "after-run-ledger",
    "after-publish",
    "after-log",
)


def _checkpoint() -> Callable[[str, str], None]:
    """PROSEC_CRASH_AT=point[:node] kills this process with SIGKILL at that point (tests)."""
    spec = os.environ.get("PROSEC_CRASH_AT", "")
    if not spec:
        return lambda point, node: None
    point, _, only = spec.partition(":")
    if point not in CRASH_POINTS:
        _fail(f"PROSEC_CRASH_AT={spec!r}: point must be one of {', '.join(CRASH_POINTS)}")

    def checkpoint(at: str, node: str) -> None:
        if at == point and (not only or only == node):
            os.kill(os.getpid(), signal.SIGKILL)

    return checkpoint


def _open(root: Path, backend: str | None, renders: tuple[str, ...]) -> Project:
    with _user_errors():
        project = open_project(root, backend=backend, env=dict(os.environ))
        cli_bindings: dict[str, dict[str, Any]] = {}
        for text in renders:
            node, table = parse_cli_binding(text)
            cli_bindings[node] = table
        project.bind_renders(cli_bindings)
    return project


def _options(
    project: Project, jobs: int | None, timeout: float | None, progress: Progress
) -> EngineOptions:
    with _user_errors():
        clocked = frozenset(n for n in project.intent.order if project.cadence(n) is not None)
    on_event: Callable[[Event], None] = progress
    if project.backend.ephemeral:
        from .backends.incontext import Narrator

        on_event = Narrator(lambda line: click.echo(line, err=True))
    return EngineOptions(
        jobs=jobs or project.config.jobs,
        timeout=timeout or project.config.timeout,
        checkpoint=_checkpoint(),
        clocked=clocked,
        on_event=on_event,
    )


def _report(project: Project, run: RunDir, summary: RunSummary, as_json: bool) -> int:
    for warning in project.warnings:
        click.echo(warning, err=True)
    code = EXIT_FAILED if summary.failed else EXIT_OK
    if as_json:
        click.echo(
            json.dumps(
                {
                    "run_id": run.run_id,
                    "path": str(run.path),
                    "waves": summary.waves,
                    "rendered": summary.rendered,
                    "skipped": summary.skipped,
                    "failed": [{"node": n, "error": e, "reason": r} for n, e, r in summary.failed],
                    "exit_code": code,
                },
                indent=2,
            )
        )
        return code
    click.echo(
        f"run {run.run_id}: {len(summary.rendered)} rendered, {len(summary.skipped)} skipped, "
        f"{len(summary.failed)} failed in {summary.waves} wave(s)"
    )
    for node, error, reason in summary.failed:
        click.echo(f"  ✗ {node}: {error}: {reason}", err=True)
    return code


def _discard_if_ephemeral(project: Project, run: RunDir) -> None:
    """In-context runs keep nothing: drop their temporary run folder once reported."""
    if project.backend.ephemeral:
        shutil.rmtree(run.path.parent, ignore_errors=True)


def _process(
    project: Project,
    *,
    kind: str,
    wakes: list[dict[str, Any]],
    all_nodes: bool,
    inputs: dict[str, str],
    options: EngineOptions,
) -> tuple[RunDir, RunSummary]:
    """Holding the lock: recover, create the run, bind inputs, reconcile, end the log."""
    project.recover()
    wakes = wakes + project.backend.drain()
    for wake in wakes:
        if wake.get("source") == "external" and "data" in wake:
            project.backend.put_value(f"external.{wake['node']}", {"data": wake["data"]})
    run = project.create_run(kind, wakes, project.upstream_runs(inputs))
    project.bind_caller(run, inputs, run.last_event())
    engine = project.engine(options)
    pending = set(project.intent.order) if all_nodes else set()
    merged: dict[str, Wake] = {}
    for item in wakes:
        arrived = Wake(source=str(item["source"]), refs=frozenset(item.get("refs", [])))
        node = str(item["node"])
        merged[node] = merged[node].merge(arrived) if node in merged else arrived
        pending.add(node)
    summary = engine.reconcile(run, pending, merged)
    project.finish(run, summary)
    return run, summary


def _serve(
    project: Project,
    *,
    kind: str,
    wakes: list[dict[str, Any]],
    inputs: dict[str, str],
    options: EngineOptions,
    as_json: bool,
) -> int:
    """Run one reconcile, then serve wakes that were queued while we held the lock.

    Queuers write their wake first and try the lock second; we release the lock first
    and look at the inbox second, so no queued wake is ever stranded.
    """
    all_nodes = kind == "run"
    with _user_errors():
        if not project.backend.try_lock():
            if all_nodes:
                _fail("another prosec runner holds this root's state lock; try again later")
            click.echo("queued: a running reconciler holds the lock and will take this wake")
            return EXIT_OK
        try:
            run, summary = _process(
                project,
                kind=kind,
                wakes=wakes,
                all_nodes=all_nodes,
                inputs=inputs,
                options=options,
            )
        finally:
            project.backend.unlock()
        code = _report(project, run, summary, as_json)
        _discard_if_ephemeral(project, run)
        while project.backend.try_lock():
            try:
                queued = project.backend.drain()
                if not queued:
                    break
                run, summary = _process(
                    project,
                    kind="inbox",
                    wakes=queued,
                    all_nodes=False,
                    inputs={},
                    options=options,
                )
            finally:
                project.backend.unlock()
            code = max(code, _report(project, run, summary, as_json))
            _discard_if_ephemeral(project, run)
        return code


def _run_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option(
        "--render",
        "renders",
        multiple=True,
        metavar="NODE=KIND:VALUE",
        help="Bind a render (wins over prose.toml); NODE '*' binds the default.",
    )(func)
    func = click.option(
        "--jobs", type=click.IntRange(min=1), help="Renders in parallel ([run] jobs, else 2)."
    )(func)
    func = click.option(
        "--timeout", type=click.FloatRange(min=0, min_open=True), help="Seconds per render."
    )(func)
    func = click.option(
        "--backend",
        type=click.Choice(BACKEND_NAMES),
        help="State backend ([run] backend, else filesystem).",
    )(func)
    return _json_opt(func)


def _parse_inputs(inputs: tuple[str, ...]) -> dict[str, str]:
    given: dict[str, str] = {}
    for item in inputs:
        name, sep, value = item.partition("=")
        if not sep or not name:
            _fail(f"--input {item!r}: expected NAME=VALUE")
        given[name] = value
    return given


@click.command("run")
@_root_arg
@click.option("--due", is_flag=True, help="Also wake self-driven nodes whose cadence elapsed.")
@click.option("--input", "inputs", multiple=True, metavar="NAME=VALUE", help="Bind a caller input.")
@_run_options
def run(
    root: Path,
    due: bool,
    inputs: tuple[str, ...],
    renders: tuple[str, ...],
    jobs: int | None,
    timeout: float | None,
    backend: str | None,
    as_json: bool,
) -> None:
    """Reconcile ROOT's active compiled intent: render whatever's memo key changed.

    Creates runs/{id}/ with the run layout; a cold start renders every node, an
    unchanged re-run renders nothing. Exit 1 when a render failed.
    """
    given = _parse_inputs(inputs)
    project = _open(root, backend, renders)
    wakes: list[dict[str, Any]] = []
    if due:
        with _user_errors():
            # local time: a cron cadence such as `0 9 * * 1-5` means nine o'clock here
            now = dt.datetime.now().astimezone()
            wakes = [{"node": n, "source": "self", "refs": []} for n in project.due_nodes(now)]
    with Progress(sys.stderr.isatty() and not as_json) as progress:
        options = _options(project, jobs, timeout, progress)
        code = _serve(
            project, kind="run", wakes=wakes, inputs=given, options=options, as_json=as_json
        )
    sys.exit(code)


def _no_constant(name: str) -> Any:
    _fail(f"--data: {name} is not a JSON number")


def _load_data(text: str) -> Any:
    raw = text
    if text.startswith("@"):
        try:
            raw = Path(text[1:]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            _fail(f"--data {text}: cannot read: {exc}")
    try:
        return json.loads(raw, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        _fail(f"--data: not JSON (line {exc.lineno} column {exc.colno}): {exc.msg}")


@click.command("trigger")
@click.argument("gateway")
@click.option("--data", required=True, metavar="JSON|@FILE", help="The external input.")
@_root_opt
@_run_options
def trigger(
    gateway: str,
    data: str,
    root: Path,
    renders: tuple[str, ...],
    jobs: int | None,
    timeout: float | None,
    backend: str | None,
    as_json: bool,
) -> None:
    """Wake GATEWAY with external input (fingerprinted by its content) and propagate."""
    value = _load_data(data)
    project = _open(root, backend, renders)
    node = project.intent.nodes.get(gateway)
    if node is None:
        _fail(f"trigger: {gateway!r} is not a node of the compiled intent")
    if gateway not in project.intent.entry_points and node.wake_source != "external":
        _fail(f"trigger: {gateway!r} is not a gateway (no entry point, wake_source not external)")
    wake = {"node": gateway, "source": "external", "refs": [token(value)], "data": value}
    with _user_errors():
        project.backend.enqueue(wake)
    with Progress(sys.stderr.isatty() and not as_json) as progress:
        options = _options(project, jobs, timeout, progress)
        code = _serve(
            project, kind="trigger", wakes=[], inputs={}, options=options, as_json=as_json
        )
    sys.exit(code)


@click.command("tick")
@click.argument("node")
@_root_opt
@_run_options
def tick(
    node: str,
    root: Path,
    renders: tuple[str, ...],
    jobs: int | None,
    timeout: float | None,
    backend: str | None,
    as_json: bool,
) -> None:
    """Wake NODE as its own cadence would (a self-driven wake: it always renders)."""
    project = _open(root, backend, renders)
    if node not in project.intent.nodes:
        _fail(f"tick: {node!r} is not a node of the compiled intent")
    with _user_errors():
        project.backend.enqueue({"node": node, "source": "self", "refs": []})
    with Progress(sys.stderr.isatty() and not as_json) as progress:
        options = _options(project, jobs, timeout, progress)
        code = _serve(project, kind="tick", wakes=[], inputs={}, options=options, as_json=as_json)
    sys.exit(code)


@click.command("resume")
@click.argument("run_ref", metavar="RUN")
@_root_opt
@_run_options
def resume(
    run_ref: str,
    root: Path,
    renders: tuple[str, ...],
    jobs: int | None,
    timeout: float | None,
    backend: str | None,
    as_json: bool,
) -> None:
    """Continue an interrupted run from its ledger, finishing the wave a crash cut."""
    project = _open(root, backend, renders)
    with _user_errors():
        run_dir = RunDir(resolve_run(root, run_ref))
        if run_dir.finished():
            click.echo(f"run {run_dir.run_id} already finished ({run_dir.finished()})")
            sys.exit(EXIT_OK)
        if not project.backend.try_lock():
            _fail("another prosec runner holds this root's state lock; try again later")
        with Progress(sys.stderr.isatty() and not as_json) as progress:
            try:
                project.recover()
                pending, wakes = project.resume_plan(run_dir)
                engine = project.engine(_options(project, jobs, timeout, progress))
                summary = engine.reconcile(run_dir, pending, wakes)
                project.finish(run_dir, summary)
            finally:
                project.backend.unlock()
        sys.exit(_report(project, run_dir, summary, as_json))


# Inspection commands live in cli_inspect.py; re-exported for LAZY_COMMANDS.
from .cli_inspect import inspect, receipts, status  # noqa: E402

__all__ = ["inspect", "receipts", "resume", "run", "status", "tick", "trigger"]
