"""`prosec status`: the active compiled intent, each node's last receipt, recent runs."""

from __future__ import annotations

from pathlib import Path

import click
from prosec.runtime.backends import BACKEND_NAMES

from .errors import user_errors
from .runtime_common import echo_json, json_opt, open_root, root_arg

__all__ = ["status"]


@click.command("status")
@root_arg
@click.option("--backend", type=click.Choice(BACKEND_NAMES))
@json_opt
def status(root: Path, backend: str | None, as_json: bool) -> None:
    """Show the active compiled intent, each node's last receipt, and recent runs."""
    from prosec.runtime.inspection import status as gather

    with user_errors():
        project = open_root(root, backend)
        data = gather(project.root, project.intent, project.backend)
    if as_json:
        echo_json(data)
        return
    from .terminal import print_status

    intent = data["intent"]
    header = [
        f"[bold]{data['root']}[/bold] — {data['backend']}",
        f"compiled intent: {intent['nodes']} nodes, {intent['edges']} edges",
    ]
    rows = []
    for node in data["nodes"]:
        last = node["status"] + (f" ({node['error']})" if "error" in node else "")
        version = (node["version"] or "—")[7:19]
        rows.append([node["node"], last, version, str(node["receipts"]), node["wake_source"]])
    footer = [f"run {item['run_id']}: {item['state']}" for item in data["runs"]]
    if data["pending_commits"]:
        footer.insert(0, f"interrupted commits (`prosec resume`): {data['pending_commits']}")
    print_status(header, rows, footer)
