"""`prosec status | inspect | receipts list | receipts verify`: read-only runtime commands."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from .backends import BACKEND_NAMES
from .cli_common import EXIT_FAILED, EXIT_OK, fail, json_opt, root_arg, root_opt, user_errors
from .runs import resolve_run
from .session import open_project

__all__ = ["inspect", "receipts", "status"]


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


@click.command("status")
@root_arg
@click.option("--backend", type=click.Choice(BACKEND_NAMES))
@json_opt
def status(root: Path, backend: str | None, as_json: bool) -> None:
    """Show the active compiled intent, each node's last receipt, and recent runs."""
    from .inspection import status as gather

    with user_errors():
        project = open_project(root, backend=backend, env=dict(os.environ))
        data = gather(project.root, project.intent, project.backend)
    if as_json:
        _echo_json(data)
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


@click.command("inspect")
@click.argument("run_ref", metavar="RUN")
@root_opt
@json_opt
def inspect(run_ref: str, root: Path, as_json: bool) -> None:
    """Explain a run: what rendered, skipped or failed and why, in wave order.

    RUN is a run id, `latest` (or `latest~N`, N runs before it), ~/id, or a path to a run
    directory (old `.prose/runs/{id}` too).
    """
    from .config import load_config
    from .inspection import inspect_run

    with user_errors():
        load_config(root.resolve())  # a bad prose.toml fails here as in every command
        legacy = Path(run_ref)
        if (legacy / "state.md").is_file():
            data = inspect_run(legacy)
        else:
            data = inspect_run(resolve_run(root.resolve(), run_ref))
    if as_json:
        _echo_json(data)
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
    for event in data["events"]:
        click.echo(
            f"  {event['event']:>4} {event['node']}: {event.get('status', event['marker'])}"
            f" — {event.get('why', '')}"
        )


@click.group("receipts")
def receipts() -> None:
    """List or verify receipt ledgers."""


@receipts.command("list")
@root_arg
@click.option("--node", help="Only this node's chain.")
@click.option("--backend", type=click.Choice(BACKEND_NAMES))
@json_opt
def receipts_list(root: Path, node: str | None, backend: str | None, as_json: bool) -> None:
    """List the durable receipts of every node (or one), oldest first."""
    from .inspection import list_receipts

    with user_errors():
        project = open_project(root, backend=backend, env=dict(os.environ))
        if node is not None and node not in project.intent.nodes:
            fail(f"--node {node!r} is not a node of the compiled intent")
        items = list_receipts(project.intent, project.backend, node)
    if as_json:
        _echo_json(items)
        return
    for item in items:
        click.echo(
            f"{item['node']}#{item['index']} {item['status']:<8} {item['hash'][7:19]} {item['why']}"
        )


@receipts.command("verify")
@click.argument("path", type=click.Path(path_type=Path))
@json_opt
def receipts_verify(path: Path, as_json: bool) -> None:
    """Verify ledgers and versions under PATH: a run, state/, a .jsonl, receipts.json, a .bin.

    Every content_hash must recompute, every prev chain hold, every version frame hash
    to its name and re-encode byte-identically. Exit 1 on any finding.
    """
    from .verify import verify_path

    if not path.exists():
        fail(f"{path}: no such file or directory")
    report = verify_path(path)
    if as_json:
        _echo_json(
            {
                "ok": report.ok,
                "ledgers": report.ledgers,
                "receipts": report.receipts,
                "versions": report.versions,
                "findings": [
                    {"file": f.file, "position": f.position, "node": f.node, "message": f.message}
                    for f in report.findings
                ],
            }
        )
    else:
        for finding in report.findings:
            click.echo(str(finding), err=True)
        click.echo(
            f"{report.ledgers} ledger(s), {report.receipts} receipt(s), "
            f"{report.versions} version(s): "
            f"{'ok' if report.ok else str(len(report.findings)) + ' problem(s)'}"
        )
    if report.ledgers + report.versions == 0:
        fail(f"{path}: no ledgers or versions found to verify")
    sys.exit(EXIT_OK if report.ok else EXIT_FAILED)
