"""`prosec lint`: report diagnostics for files and directories."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import report
from ..config import Config
from ..discover import discover
from ..lint import lint_refs
from .common import codes_option, load_config
from .errors import ExitCode, user_errors


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(report.FORMATS),
    default="text",
    show_default=True,
    help="text: `path:line:col: severity code message`; json: one record per diagnostic; "
    "github: workflow annotations; sarif: SARIF 2.1.0 for code scanning.",
)
@codes_option("--select", "Only report these codes (comma-separated; `prefix*` allowed).")
@codes_option("--ignore", "Never report these codes (comma-separated; `prefix*` allowed).")
@click.option(
    "--strict/--no-strict",
    default=None,
    help="Treat a missing responsibility `id:` and wiring warnings as errors.",
)
@click.option(
    "--exclude",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Skip this file or directory (repeatable).",
)
@click.option("-q", "--quiet", is_flag=True, help="Do not print the summary line on stderr.")
def lint(
    paths: tuple[Path, ...],
    fmt: str,
    select: tuple[str, ...] | None,
    ignore: tuple[str, ...] | None,
    strict: bool | None,
    exclude: tuple[Path, ...],
    quiet: bool,
) -> None:
    """Check OpenProse contracts and report diagnostics.

    PATHS are `.prose.md` files or directories (searched recursively, skipping
    dist/, runs/, state/, deps/, .git/ and gitignored paths); the default is the
    current directory. Each file is checked with the rest of its project, as
    `prosec build` checks it: wiring, pattern expansion and lowering included, so a
    cycle or an unknown facet fails lint too. Settings come from each project's
    `prose.toml` ([lint] select, ignore, strict, severity.<code>, [[wiring.pin]]);
    flags win over the file.

    \b
    Examples:
      prosec lint src/
      prosec lint --format sarif . > prosec.sarif
      prosec lint --select id_missing,section_retired --strict src/

    Exit status: 0 when no error is reported, 1 when any is, 2 for a usage or
    I/O problem, 3 when prosec hit a bug (an internal_error diagnostic).
    """
    targets = list(paths) or [Path(".")]
    config = load_config(targets[0]).with_overrides(select=select, ignore=ignore, strict=strict)
    with user_errors():
        refs = discover(targets, Path.cwd(), exclude)
    configs: dict[Path, Config] = {}

    def project_config(root: Path) -> Config:  # each project's own prose.toml, flags win
        if root not in configs:
            configs[root] = load_config(root).with_overrides(
                select=select, ignore=ignore, strict=strict
            )
        return configs[root]

    result = lint_refs(refs, config, configs=project_config)
    sys.stdout.write(report.render(result.diagnostics, fmt))
    if not quiet and fmt == "text":
        click.echo(report.summary(result.diagnostics, len(refs)), err=True)
    if any(d.code == "internal_error" for d in result.diagnostics):
        sys.exit(ExitCode.INTERNAL)
    sys.exit(ExitCode.FINDINGS if result.has_errors else ExitCode.OK)
