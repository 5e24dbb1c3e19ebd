"""`prosec status`: the active compiled intent, each node's last receipt, recent runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    """Show the active compiled intent, each node's last receipt and what last woke it
    (a trigger, its cadence, or the producers whose new truth it read), and recent runs."""
    from prosec.runtime.inspection import status as gather

    with user_errors():
        project = open_root(root, backend)
        data = gather(project.root, project.intent, project.backend)
    config = project.config  # where each layered setting came from (flag, .env, …)
    data["settings"] = {
        "jobs": {"value": config.jobs, "from": config.origins["jobs"]},
        "default_model": {"value": config.default_model, "from": config.origins["default_model"]},
    }
    if project.backend.name == "postgres":
        from prosec.runtime.backends.postgres import PostgresBackend
        from prosec.runtime.workers.status import queue_status

        assert isinstance(project.backend, PostgresBackend)
        with user_errors():
            queue = queue_status(project.backend)
        if queue is not None:
            data["queue"] = queue
    if as_json:
        echo_json(data)
        return
    from rich.markup import escape

    from ..report import plural
    from .terminal import print_status

    intent = data["intent"]
    header = [
        f"[bold]{escape(data['root'])}[/bold] — {escape(data['backend'])}",
        f"compiled intent: {plural(intent['nodes'], 'node')}, {plural(intent['edges'], 'edge')}",
        "settings: "
        + ", ".join(
            f"{name.replace('_', ' ')} {escape(str(item['value']))} "
            f"(from {escape(_short(item['from'], data['root']))})"
            for name, item in data["settings"].items()
        ),
    ]
    rows = []
    for node in data["nodes"]:
        last = node["status"] + (f" ({node['error']})" if "error" in node else "")
        version = (node["version"] or "—")[7:19] or "—"
        wake = node["last_wake"] or "—"
        rows.append([node["node"], last, version, str(node["receipts"]), wake])
    footer = [f"run {item['run_id']}: {item['state']}" for item in data["runs"]]
    if data["runs"]:
        footer.append(f"runs are in {escape(str(Path(data['root']) / 'runs'))}/")
    if "queue" in data:
        footer.extend(_queue_lines(data["queue"]))
    if data["pending_commits"]:
        footer.insert(0, f"interrupted commits (`prosec resume`): {data['pending_commits']}")
    print_status(header, rows, footer)


def _queue_lines(queue: dict[str, Any]) -> list[str]:
    """`workers: 2 (heartbeats 0.4 s, 1.1 s ago)` and `jobs: 1 queued, 2 running, 0 failed`."""
    workers = queue["workers"]
    ages = ", ".join(f"{w['heartbeat_age']} s" for w in workers)
    lines = [f"workers: {len(workers)}" + (f" (heartbeats {ages} ago)" if workers else "")]
    jobs = queue["jobs"]
    lines.append(
        f"jobs: {jobs['queued']} queued, {jobs['running']} running, {jobs['failed']} failed"
    )
    for job in queue["job_list"]:
        if job["state"] != "queued":
            lines.append(f"  {job['state']}: {job['node']} (attempts {job['attempts']})")
    return lines


def _short(origin: str, root: str) -> str:
    """`/…/ROOT/.env:3` → `.env:3` (the layers are named as a user writes them)."""
    prefix = str(Path(root)) + "/"
    return origin.removeprefix(prefix)
