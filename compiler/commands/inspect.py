"""`prosec inspect RUN`: what a run rendered, skipped or failed and why, in wave order."""

from __future__ import annotations

from pathlib import Path

import click

from .errors import user_errors
from .inputs import require_dir
from .runtime_common import echo_json, json_opt, root_opt

__all__ = ["inspect"]


@click.command("inspect")
@click.argument("run_ref", metavar="RUN")
@root_opt
@json_opt
def inspect(run_ref: str, root: Path, as_json: bool) -> None:
    """Explain a run: what rendered, skipped or failed and why, in wave order.

    RUN is a run id, `latest` (or `latest~N`, N runs before it), ~/id, or a path to a run
    directory of the project (or an old `.prose/runs/{id}` folder).
    """
    from prosec.runtime.inspection import inspect_ref

    require_dir(root, "ROOT")
    with user_errors():
        data = inspect_ref(root.resolve(), run_ref)
    if as_json:
        echo_json(data)
        return
    click.echo(f"run {data['run_id']}: {data['state']}")
    if data.get("legacy"):
        for binding in data["bindings"]:
            click.echo(f"  binding {binding['name']} ({binding['kind']})")
        return
    for line in data["header"]:
        click.echo(f"  {line}")
    for index, wave in enumerate(data["waves"], start=1):
        click.echo(f"wave {index} (event {wave['event']}): {', '.join(wave['nodes'])}")
    if not data["waves"]:
        click.echo("no wave: nothing rendered")
    if data.get("asleep"):
        click.echo(f"stayed asleep, nothing they read moved: {', '.join(data['asleep'])}")
    unrendered = [e["node"] for e in data["events"] if e.get("memo_hit")]
    if unrendered:
        click.echo(f"not rendered, contract and inputs unchanged: {', '.join(unrendered)}")
    for event in data["events"]:
        why = event.get("why")
        click.echo(
            f"  {event['event']:>4} {event['node']}: {event.get('status', event['marker'])}"
            + (f" — {why}" if why else "")
        )
