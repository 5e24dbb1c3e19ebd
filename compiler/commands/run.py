"""`prosec run | trigger | tick | resume`: reconcile the active compiled intent.

Exit codes: 0 ok, 1 a render failed, 2 usage or I/O error (bad flags, missing manifest,
unreadable state, lock held), 3 internal error. The runtime does the work
(prosec.runtime.serve); this module parses options, reads the environment and reports.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
from prosec.runtime import serve
from prosec.runtime.backends import BACKEND_NAMES
from prosec.runtime.config import load_config
from prosec.runtime.executor import CRASH_POINTS, EngineOptions, Event, RunSummary
from prosec.runtime.protocol import QueuedWake
from prosec.runtime.renders import parse_cli_binding
from prosec.runtime.renders.process import LOG_FILE
from prosec.runtime.runs import RunDir, resolve_run
from prosec.runtime.session import Project, open_compiled

from ..report import plural
from .errors import ExitCode, fail, user_errors
from .inputs import finite_seconds, load_data, require_dir
from .runtime_common import json_opt, open_root, root_arg, root_opt
from .terminal import Progress
from .worker import dispatching, workers_options

__all__ = ["resume", "run", "tick", "trigger"]


def _checkpoint() -> Callable[[str, str], None]:
    """PROSEC_CRASH_AT=point[:node] kills this process with SIGKILL at that point (tests)."""
    spec = os.environ.get("PROSEC_CRASH_AT", "")
    if not spec:
        return lambda point, node: None
    point, _, only = spec.partition(":")
    if point not in CRASH_POINTS:
        fail(f"PROSEC_CRASH_AT={spec!r}: point must be one of {', '.join(CRASH_POINTS)}")

    def checkpoint(at: str, node: str) -> None:
        if at == point and (not only or only == node):
            os.kill(os.getpid(), signal.SIGKILL)

    return checkpoint


def _open(root: Path, backend: str | None, renders: tuple[str, ...]) -> Project:
    with user_errors():
        project = open_root(root, backend)
        cli_bindings: dict[str, dict[str, Any]] = {}
        for text in renders:
            node, table = parse_cli_binding(text)
            cli_bindings[node] = table
        project.bind_renders(cli_bindings)
    model = click.get_current_context().meta.get(MODEL_FLAG)
    if model is not None:
        project.config = project.config.overridden(default_model=model)
    return project


def _options(
    project: Project, jobs: int | None, timeout: float | None, progress: Progress
) -> EngineOptions:
    with user_errors():
        clocked = serve.clocked_nodes(project)
    on_event: Callable[[Event], None] = progress
    if project.backend.ephemeral:
        from prosec.runtime.backends.incontext import Narrator

        narrator = Narrator(lambda line: click.echo(line, err=True))
        narrator.start()
        on_event = narrator
    if jobs is not None:
        project.config = project.config.overridden(jobs=jobs)
    return EngineOptions(
        jobs=project.config.jobs,
        default_model=project.config.default_model,
        timeout=timeout or project.config.timeout,
        checkpoint=_checkpoint(),
        clocked=clocked,
        on_event=on_event,
    )


def _report(project: Project, run: RunDir, summary: RunSummary, as_json: bool) -> ExitCode:
    for warning in project.warnings:
        click.echo(warning, err=True)
    code = ExitCode.FINDINGS if summary.failed else ExitCode.OK
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
                    "exit_code": int(code),
                },
                indent=2,
            )
        )
        return code
    click.echo(
        f"run {run.run_id}: {len(summary.rendered)} rendered, {len(summary.skipped)} skipped, "
        f"{len(summary.failed)} failed in {plural(summary.waves, 'wave')}"
    )
    for node, error, reason in summary.failed:
        click.echo(f"  ✗ {node}: {error}: {reason}", err=True)
        log = run.path / "workspace" / node / LOG_FILE
        if log.is_file():
            click.echo(f"    its output: {log.resolve()}", err=True)
    if summary.failed:
        click.echo(f"  why, node by node: prosec inspect {run.run_id}", err=True)
    return code


def _note_empty_gateways(project: Project) -> None:
    """A run before any trigger renders the gateways without data: say so."""
    for gateway in serve.gateways_without_data(project):
        click.echo(
            f"prosec: gateway {gateway} has no data yet (no `prosec trigger {gateway}` so "
            "far): it renders without trigger data, and its subscribers read that",
            err=True,
        )


def _serve(
    project: Project,
    *,
    kind: str,
    wakes: list[QueuedWake],
    inputs: dict[str, str],
    options: EngineOptions,
    as_json: bool,
) -> ExitCode:
    """Serve the wakes (and any queued meanwhile), reporting each run; the worst code."""
    codes = [ExitCode.OK]

    def report(run: RunDir, summary: RunSummary) -> None:
        end = getattr(options.on_event, "end", None)
        if project.backend.ephemeral and callable(end):
            end(len(summary.failed))
        codes.append(_report(project, run, summary, as_json))

    with user_errors():
        served = serve.serve(
            project, kind=kind, wakes=wakes, inputs=inputs, options=options, on_run=report
        )
    if not served:
        click.echo("queued: a running reconciler holds the lock and will take this wake")
    return max(codes)


MODEL_FLAG = "prosec.run.model"
_MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}")


def _remember_model(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """`--model` goes to the project's settings as they are opened (see `_open`)."""
    if value is not None:
        if not _MODEL_NAME.fullmatch(value):
            raise click.BadParameter(
                f"{value!r:.40} is not a model name (letters, digits and `._:/@+-`)"
            )
        ctx.meta[MODEL_FLAG] = value


def _run_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option(
        "--model",
        metavar="MODEL",
        expose_value=False,
        callback=_remember_model,
        help="Default model of agent renders (wins over OPENPROSE_DEFAULT_MODEL and "
        "[run] default_model; a node's ### Runtime model and its binding's win over it).",
    )(func)
    func = click.option(
        "--render",
        "renders",
        multiple=True,
        metavar="NODE=KIND:VALUE",
        help="Bind a render (wins over prose.toml); NODE '*' binds the default.",
    )(func)
    func = click.option(
        "--jobs",
        type=click.IntRange(min=1, max=1024),
        help="Renders in parallel ([run] jobs, else 2).",
    )(func)
    func = click.option(
        "--timeout", type=float, callback=finite_seconds, help="Seconds per render."
    )(func)
    func = click.option(
        "--backend",
        type=click.Choice(BACKEND_NAMES),
        help="State backend ([run] backend, else filesystem).",
    )(func)
    return json_opt(func)


@contextlib.contextmanager
def _terminable() -> Iterator[None]:
    """SIGTERM and SIGHUP stop the runner like Ctrl-C does, so it kills its renders before
    exiting (with 128 + the signal, as a shell expects) instead of dying and leaving them
    behind."""

    def stop(signum: int, frame: Any) -> None:
        sys.exit(128 + signum)

    caught = [signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    previous = {signum: signal.signal(signum, stop) for signum in caught}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _parse_inputs(inputs: tuple[str, ...]) -> dict[str, str]:
    given: dict[str, str] = {}
    for item in inputs:
        name, sep, value = item.partition("=")
        if not sep or not name:
            fail(f"--input {item!r}: expected NAME=VALUE")
        given[name] = value
    return given


def _progress(as_json: bool) -> Progress:
    return Progress(sys.stderr.isatty() and not as_json)


@click.command("run", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@root_arg
@click.option("--due", is_flag=True, help="Also wake self-driven nodes whose cadence elapsed.")
@click.option("--input", "inputs", multiple=True, metavar="NAME=VALUE", help="Bind a caller input.")
@click.option(
    "--replay",
    metavar="RUN",
    help="A program file run: take every step from RUN's journal (reproduce it exactly).",
)
@_run_options
@workers_options
@click.pass_context
def run(
    ctx: click.Context,
    root: Path,
    due: bool,
    inputs: tuple[str, ...],
    replay: str | None,
    renders: tuple[str, ...],
    jobs: int | None,
    timeout: float | None,
    backend: str | None,
    as_json: bool,
    workers: int | None,
    lease: float,
) -> None:
    """Run ROOT: a project folder's active compiled intent, or a program file.

    A folder: reconcile its active compiled intent, rendering whatever's memo key
    changed (runs/{id}/ with the run layout; a cold start renders every node, an
    unchanged re-run renders nothing). A `.prose.md` file: compile it in memory and run
    it, no build or activate: a function in the VM, an index.prose.md with its folder, a
    responsibility with its project. Inputs: --input NAME=VALUE, --NAME VALUE,
    --NAME=VALUE, or after `--`, NAME: VALUE. Exit 1 when a render or step failed.
    """
    given = _parse_inputs(inputs)
    given.update(_extra_inputs(list(ctx.args)))
    if root.is_file() or root.name.endswith(".prose.md"):
        if due:
            fail("--due wakes a project's cadences: give the project folder, not a file")
        if workers is not None:
            fail("--workers renders a project's nodes: give the project folder, not a file")
        from .run_file import run_file

        if not root.exists():
            fail(f"{root}: no such file")
        run_file(
            root,
            given,
            renders=renders,
            jobs=jobs,
            timeout=timeout,
            backend=backend,
            as_json=as_json,
            replay=replay,
        )
        return
    if replay:
        fail("--replay RUN reproduces a program file run: give the file")
    project = _open(root, backend, renders)
    _run_project(project, given, due, jobs, timeout, as_json, (workers, lease, renders))


def _extra_inputs(extra: list[str]) -> dict[str, str]:
    if not extra:
        return {}
    from .run_file import parse_extra_inputs

    return parse_extra_inputs(extra)


def _run_project(
    project: Project,
    given: dict[str, str],
    due: bool,
    jobs: int | None,
    timeout: float | None,
    as_json: bool,
    workers: tuple[int | None, float, tuple[str, ...]] = (None, 0.0, ()),
) -> None:
    if not as_json:
        with user_errors():
            _note_empty_gateways(project)
    wakes: list[QueuedWake] = []
    if due:
        with user_errors():
            # local time: a cron cadence such as `0 9 * * 1-5` means nine o'clock here
            wakes = serve.due_wakes(project, dt.datetime.now().astimezone())
    with _terminable(), _progress(as_json) as progress, dispatching(project, *workers) as dispatch:
        options = replace(_options(project, jobs, timeout, progress), dispatch=dispatch)
        code = _serve(
            project, kind="run", wakes=wakes, inputs=given, options=options, as_json=as_json
        )
    sys.exit(code)


def run_intent(
    root: Path,
    raw: dict[str, Any],
    target: str,
    given: dict[str, str],
    renders: tuple[str, ...],
    jobs: int | None,
    timeout: float | None,
    backend: str | None,
    as_json: bool,
) -> None:
    """Mount and reconcile a compiled intent made in memory (`prosec run FILE` of a
    responsibility or a program's index.prose.md); `root:` names the file."""
    with user_errors():
        project = open_compiled(root, raw, backend=backend, env=dict(os.environ))
        project.invoked = target
        cli_bindings: dict[str, dict[str, Any]] = {}
        for text in renders:
            node, table = parse_cli_binding(text)
            cli_bindings[node] = table
        project.bind_renders(cli_bindings)
    _run_project(project, given, False, jobs, timeout, as_json)


@click.command("trigger")
@click.argument("gateway")
@click.option("--data", required=True, metavar="JSON|@FILE", help="The external input.")
@root_opt
@_run_options
@workers_options
def trigger(
    gateway: str,
    data: str,
    root: Path,
    renders: tuple[str, ...],
    jobs: int | None,
    timeout: float | None,
    backend: str | None,
    as_json: bool,
    workers: int | None,
    lease: float,
) -> None:
    """Wake GATEWAY with external input (fingerprinted by its content) and propagate.

    ROOT (default: the current directory; `--root ROOT` is the same) is the OpenProse root.
    """
    value = load_data(data)
    project = _open(root, backend, renders)
    with user_errors():
        serve.enqueue_trigger(project, gateway, value)
    with (
        _terminable(),
        _progress(as_json) as progress,
        dispatching(project, workers, lease, renders) as dispatch,
    ):
        options = replace(_options(project, jobs, timeout, progress), dispatch=dispatch)
        code = _serve(
            project, kind="trigger", wakes=[], inputs={}, options=options, as_json=as_json
        )
    sys.exit(code)


@click.command("tick")
@click.argument("node")
@root_opt
@_run_options
@workers_options
def tick(
    node: str,
    root: Path,
    renders: tuple[str, ...],
    jobs: int | None,
    timeout: float | None,
    backend: str | None,
    as_json: bool,
    workers: int | None,
    lease: float,
) -> None:
    """Wake NODE as its own cadence would (a self-driven wake: it always renders).

    ROOT (default: the current directory; `--root ROOT` is the same) is the OpenProse root.
    """
    project = _open(root, backend, renders)
    with user_errors():
        serve.enqueue_tick(project, node)
    with (
        _terminable(),
        _progress(as_json) as progress,
        dispatching(project, workers, lease, renders) as dispatch,
    ):
        options = replace(_options(project, jobs, timeout, progress), dispatch=dispatch)
        code = _serve(project, kind="tick", wakes=[], inputs={}, options=options, as_json=as_json)
    sys.exit(code)


@click.command("resume")
@click.argument("run_ref", metavar="RUN")
@root_opt
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
    """Continue an interrupted run from its ledger, finishing the wave a crash cut.

    A program file run (`prosec run FILE`) continues from its journal: every step it
    completed is taken from there, none is done again. A legacy `.prose/runs/{id}` run
    (its path, its bare id, or `latest`) continues as `runs/{id}/` from its `state.md`
    and `bindings/`."""
    require_dir(root)  # before the run is looked up: a ROOT that is a loop or a file is exit 2
    with user_errors():
        load_config(root)  # a bad prose.toml is reported first, as by every command
    from prosec.runtime.inspection import legacy_ref

    legacy = legacy_ref(root.resolve(), run_ref)
    if legacy is not None:  # a legacy .prose/ run continues as runs/{its id}/
        from .legacy import resume_legacy

        resume_legacy(root, legacy, renders, jobs, timeout, backend, as_json)
        return
    vm_run = False
    try:  # a program file run resumes from its journal; anything else as below
        candidate = RunDir(resolve_run(root, run_ref))
        vm_run = candidate.info().get("kind") == "vm"
    except (OSError, ValueError):
        pass  # reported below, after the project's own settings are checked
    if vm_run:
        from .run_file import resume_file

        resume_file(root, candidate, renders, jobs, timeout, backend, as_json)
        return
    project = _open(root, backend, renders)
    with user_errors():
        run_dir = RunDir(resolve_run(root, run_ref))
        if run_dir.finished():
            click.echo(f"run {run_dir.run_id} already finished ({run_dir.finished()})")
            sys.exit(ExitCode.OK)
    with _terminable(), _progress(as_json) as progress:
        options = _options(project, jobs, timeout, progress)
        with user_errors():
            summary = serve.resume(project, run_dir, options)
    sys.exit(_report(project, run_dir, summary, as_json))
