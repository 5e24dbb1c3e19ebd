"""`prosec inspect RUN`: what a run rendered, skipped or failed and why, in wave order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
        _legacy(data)
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


_MARKS = {
    "written": "-->",
    "complete": "✓",
    "executing": "<-- EXECUTING",
    "retrying": "<-- RETRYING",
    "not yet entered": "[not yet entered]",
    "next": "[next]",
}


def _legacy(data: dict[str, Any], indent: str = "") -> None:
    """A legacy `.prose/` run (seed 000), every part of it, imports nested."""
    for key in ("program", "started", "updated"):
        if data.get(key):
            click.echo(f"{indent}  {key}: {data[key]}")
    if data.get("env"):
        click.echo(f"{indent}  .prose/.env sets: {', '.join(data['env'])} (values not shown)")
    if data.get("trace"):
        click.echo(f"{indent}execution trace:")
    for entry in data.get("trace", []):
        mark = _MARKS.get(str(entry.get("status")), "")
        if entry.get("status") == "retrying":
            mark += f" (attempt {entry.get('attempt')}/{entry.get('of')})"
        if entry.get("wrote"):
            mark = f"{mark} {entry['wrote']}".strip()
        click.echo(
            f"{indent}  {entry['line']:>3} {entry['code']}" + (f"  # {mark}" if mark else "")
        )
    for construct in data.get("constructs", []):
        first, last = construct["lines"]
        items = ", ".join(f"{k}: {v}" for k, v in construct["items"].items())
        click.echo(f"{indent}active {construct['kind']} (lines {first}-{last}): {items}")
    for frame in data.get("call_stack", []):
        click.echo(
            f"{indent}call stack: execution {frame['execution_id']} {frame['block']} "
            f"depth {frame['depth']} {frame['status']}"
        )
    for binding in data.get("bindings", []):
        scope = (
            "root" if binding["execution_id"] is None else f"execution {binding['execution_id']}"
        )
        click.echo(
            f"{indent}binding {binding['name']} ({binding['kind']}, {scope}): {binding['path']}"
        )
    for agent in data.get("agents", []):
        count = len(agent["segments"])
        click.echo(
            f"{indent}agent {agent['name']} ({agent['scope']}): "
            f"{'memory, ' if agent['memory'] is not None else ''}"
            f"{count} segment{'' if count == 1 else 's'}"
        )
    for item in data.get("imports", []):
        click.echo(f"{indent}import {item['handle']}--{item['slug']} ({item['path']}):")
        _legacy(item, indent + "  ")
    for problem in data.get("problems", []):
        click.echo(f"{indent}problem: {problem}")
