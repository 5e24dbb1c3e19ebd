"""`prosec db prune`: drop old run data from the seed 004 run tables of the SQL backends
and from the filesystem's VM state logs (runs/{id}/vm/state.jsonl)."""

from __future__ import annotations

from pathlib import Path

import click
from prosec.runtime.backends import BACKEND_NAMES

from .errors import user_errors
from .runtime_common import echo_json, json_opt, open_root, root_arg

__all__ = ["db"]


@click.group("db")
def db() -> None:
    """The seed 004 run data: the SQL backends' run tables (sqlite, postgres), the
    filesystem's VM state logs."""


@db.command("prune")
@root_arg
@click.option("--backend", type=click.Choice(BACKEND_NAMES))
@click.option(
    "--keep",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="ended runs whose data stays (the newest)",
)
@json_opt
def prune(root: Path, backend: str | None, keep: int, as_json: bool) -> None:
    """Delete the run data (executions, bindings, imports, run agents and segments,
    attachments) of every ended run but the KEEP newest (on the filesystem: the rows of
    each run's vm/state.jsonl but its run status). Run rows and receipts stay: the
    ledger is append-only."""
    from prosec.runtime.serve import prune_run_data

    with user_errors():
        project = open_root(root, backend)
        try:
            pruned = prune_run_data(project, keep)
        finally:
            project.backend.close()
    name = project.backend.name
    if as_json:
        echo_json({"backend": name, "keep": keep, "pruned": pruned})
        return
    if pruned is None:
        click.echo(f"nothing to prune: the {name} backend keeps no run data")
        return
    noun = "run" if len(pruned) == 1 else "runs"
    click.echo(f"pruned the run data of {len(pruned)} {noun} (kept the {keep} newest ended runs)")
    for run_id in pruned:
        click.echo(f"  {run_id}")
