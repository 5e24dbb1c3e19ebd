"""`prosec activate`: re-validate dist/manifest.next.json and promote it atomically."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from prosec.runtime import provenance
from prosec.runtime.intent_check import iter_problems

from ..build import ACTIVE, NEXT, write_atomic
from .errors import ExitCode, fail
from .inputs import MANIFEST_LIMIT, read_input, require_dir
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
    require_dir(root)
    source = root / "dist" / NEXT
    if not source.exists() and not source.is_symlink():
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
    data = read_input(source, MANIFEST_LIMIT)
    try:
        # the compiled sources' list first: a run checks it against the active manifest
        provenance.promote(root / "dist", data)
        target = write_atomic(root / "dist" / ACTIVE, data)
    except OSError as exc:
        fail(f"cannot write {root / 'dist' / ACTIVE}: {exc.strerror or exc}")
    click.echo(f"prosec: activated {target.relative_to(root).as_posix()}", err=True)
