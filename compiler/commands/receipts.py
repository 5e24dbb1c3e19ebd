"""`prosec receipts list | verify | cost`: the durable receipt chains, checking any ledger,
and what the renders cost."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import click
from prosec.runtime.backends import BACKEND_NAMES

from ..report import plural
from .errors import ExitCode, fail, user_errors
from .runtime_common import echo_json, echo_text, json_opt, open_root, root_arg

__all__ = ["receipts"]


@click.group("receipts")
def receipts() -> None:
    """List, verify or cost receipt ledgers."""


@receipts.command("list")
@root_arg
@click.option("--node", help="Only this node's chain.")
@click.option("--backend", type=click.Choice(BACKEND_NAMES))
@json_opt
def receipts_list(root: Path, node: str | None, backend: str | None, as_json: bool) -> None:
    """List the durable receipts of every node (or one), oldest first."""
    from prosec.runtime.inspection import list_receipts

    with user_errors():
        project = open_root(root, backend)
        if node is not None and node not in project.intent.nodes:
            fail(f"--node {node!r} is not a node of the compiled intent")
        items = list_receipts(project.intent, project.backend, node)
    if as_json:
        echo_json(items)
        return
    for item in items:
        click.echo(
            f"{item['node']}#{item['index']} {item['status']:<8} {item['hash'][7:19]} {item['why']}"
        )


@receipts.command("cost")
@root_arg
@click.option("--backend", type=click.Choice(BACKEND_NAMES))
@json_opt
def receipts_cost(root: Path, backend: str | None, as_json: bool) -> None:
    """Fresh vs reused tokens of every durable receipt, by node and by surprise cause
    (what woke the render: input, self or external)."""
    from prosec.runtime.costs import cost_summary

    with user_errors():
        project = open_root(root, backend)
        chains = [r for node in project.intent.order for r in project.backend.ledger(node)]
        summary = cost_summary(chains, project.intent.order)
    if as_json:
        echo_json(summary)
        return
    header = f"{'':<28} {'receipts':>8} {'fresh':>10} {'reused':>10} {'reused %':>8}"
    for title, key, rows in (
        ("by node", "node", summary["by_node"]),
        ("by surprise cause", "cause", summary["by_cause"]),
    ):
        click.echo(header.replace(" " * 28, f"{title:<28}", 1))
        for row in rows:
            echo_text(_cost_line(str(row[key]), row))
        click.echo()
    click.echo(_cost_line("total", summary["total"]))


def _cost_line(name: str, row: dict[str, int | float]) -> str:
    shown = name if len(name) <= 28 else name[:27] + "…"
    return (
        f"{shown:<28} {row['receipts']:>8} {row['fresh']:>10} {row['reused']:>10} "
        f"{100 * row['reuse_ratio']:>7.1f}%"
    )


@receipts.command("verify")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--backend",
    type=click.Choice(BACKEND_NAMES),
    help="Also check this state backend of the root at PATH ([run] backend, else filesystem).",
)
@json_opt
def receipts_verify(path: Path, backend: str | None, as_json: bool) -> None:
    """Verify ledgers, versions and state under PATH: a project root (its configured
    backend: state/, state/prosec.db or PostgreSQL), a run, state/, a .jsonl,
    receipts.json, a .bin or a .db.

    Every content_hash must recompute, every prev chain hold, every version frame hash
    to its name and re-encode byte-identically, and every published version be the one
    its node's last rendered receipt signed. Exit 1 on any finding.
    """
    from prosec.runtime.verify import verify_path

    problem = _unverifiable(path)
    if problem is not None:
        fail(f"{path}: {problem}")
    with user_errors():
        report = verify_path(path, backend=backend, env=dict(os.environ))
    if as_json:
        echo_json(
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
            echo_text(str(finding), err=True)
        click.echo(
            f"{plural(report.ledgers, 'ledger')}, {plural(report.receipts, 'receipt')}, "
            f"{plural(report.versions, 'version')}: "
            f"{'ok' if report.ok else plural(len(report.findings), 'problem')}"
        )
    if report.ledgers + report.versions == 0 and not report.findings:
        fail(f"{path}: no ledgers or versions found to verify")
    sys.exit(ExitCode.OK if report.ok else ExitCode.FINDINGS)


def _unverifiable(path: Path) -> str | None:
    """Why PATH cannot be verified at all (None when it is a file or folder to check)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "a broken symlink" if path.is_symlink() else "no such file or directory"
    except OSError as exc:  # a symlink loop, a name too long
        return exc.strerror or str(exc)
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return "not a regular file or directory"
    return None
