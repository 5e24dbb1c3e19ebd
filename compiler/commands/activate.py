"""`prosec activate`: re-validate dist/manifest.next.json and promote it atomically."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from prosec.runtime.intent_check import iter_problems

from ..build import ACTIVE, NEXT, write_atomic
from .errors import ExitCode, fail
from .validate import load_intent


@click.command(name="activate")
@click.argument("root", required=False, default=".", type=click.Path(path_type=Path))
def activate_command(root: Path) -> None:
    """Promote ROOT/dist/manifest.next.json to ROOT/dist/manifest.active.json.

    The next manifest is validated again (schema and semantic rules) and copied byte
    for byte through a temporary file and a rename, so a reader never sees a torn
    active manifest. An invalid or missing next manifest changes nothing.

    Exit status: 0 promoted, 1 missing or invalid next manifest, 2 usage error.
    """
    if not root.is_dir():
        fail(f"{root}: not a directory")
    source = root / "dist" / NEXT
    if not source.is_file():
        click.echo(f"prosec: no {source}; run `prosec build` first", err=True)
        sys.exit(ExitCode.FINDINGS)
    document, problems = load_intent(source)
    if not problems:
        problems = list(iter_problems(document))
    for problem in problems:
        click.echo(f"{source}: {problem}")
    if problems:
        click.echo(f"prosec: {source} is invalid; nothing activated", err=True)
        sys.exit(ExitCode.FINDINGS)
    target = write_atomic(root / "dist" / ACTIVE, source.read_bytes())
    click.echo(f"prosec: activated {target.relative_to(root).as_posix()}", err=True)
