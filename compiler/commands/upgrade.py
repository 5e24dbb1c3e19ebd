"""`prosec upgrade [PATH...]`: migrate legacy `.prose` programs and `.prose/` state trees
(seed 000) to the current layout (the plan: compiler/upgrade.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from .errors import ExitCode, fail, report_error
from .runtime_common import echo_json

__all__ = ["upgrade_command"]

_DONE = {"write": "wrote", "remove": "removed", "move": "moved", "adopt": "adopted"}


@click.command("upgrade")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--dry-run", is_flag=True, help="List every change and write nothing.")
@click.option("--json", "as_json", is_flag=True, help="The changes and errors as JSON.")
def upgrade_command(paths: tuple[Path, ...], dry_run: bool, as_json: bool) -> None:
    """Migrate legacy `.prose` programs and `.prose/` state trees to the current layout.

    PATH (default: the current directory, and the user-scope `~/.prose/` beside it) is a
    `.prose` file, a folder (its `.prose` files and its `.prose/` tree), or a `.prose/`
    folder itself (`~/.prose` migrates to the user root, $OPENPROSE_USER_ROOT or
    `~/.agents/prose`: user agents to its `state/agents/`). A `.prose` program becomes `NAME.prose.md` (kind: function) beside
    it; `.prose/.env` moves to `.env`, `.prose/agents/` to `state/agents/`, each run of
    `.prose/runs/` becomes `runs/{id}/` (a VM run `prosec resume` continues, the legacy
    files kept in it as `legacy/`). Nothing is overwritten.

    Exit status: 0 when everything planned was done (or, with --dry-run, could be), 1 when
    anything could not be migrated, 2 for a usage problem (a PATH that does not exist).
    """
    from ..upgrade import plan_upgrade

    targets = list(paths) or [Path(".")]
    for path in targets:
        if not path.exists():
            fail(f"{path}: no such file or directory")
        if not (path.is_file() or path.is_dir()):  # a FIFO or device: a trap, not a program
            fail(f"{path}: not a regular file or folder")
    plan = plan_upgrade(targets, Path.home(), user=not paths)
    performed: list[dict[str, Any]] = []
    errors = [(path, message) for path, message in plan.errors]
    if not dry_run:
        for change in plan.changes:
            try:
                change.apply()
            except (OSError, ValueError) as exc:
                errors.append((change.path, f"{change.action} failed: {exc}"))
                continue
            performed.append(change.as_json(_shown))
    planned = [change.as_json(_shown) for change in plan.changes]
    code = ExitCode.FINDINGS if errors else ExitCode.OK
    if as_json:
        echo_json(
            {
                "dry_run": dry_run,
                "changes": planned if dry_run else performed,
                "errors": [{"path": _shown(p), "error": m} for p, m in errors],
                "notes": plan.notes,
                "exit_code": int(code),
            }
        )
        sys.exit(code)
    for item in planned if dry_run else performed:
        verb = f"would {item['action']}" if dry_run else _DONE[item["action"]]
        arrow = f" -> {item['to']}" if item["to"] else ""
        click.echo(f"{verb} {item['path']}{arrow}: {item['detail']}")
    for note in plan.notes:
        click.echo(f"note: {note}")
    for path, message in errors:
        report_error(f"{_shown(path)}: {message}")
    count = len(planned if dry_run else performed)
    if not count and not errors:
        click.echo("nothing to upgrade: no legacy `.prose` program or `.prose/` tree found")
    elif dry_run:
        click.echo(f"{count} change(s) planned; --dry-run wrote nothing")
    sys.exit(code)


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)
