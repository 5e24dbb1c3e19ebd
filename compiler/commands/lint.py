"""`prosec lint`: report diagnostics for files and directories."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .. import report
from ..config import Config
from ..discover import discover
from ..lint import lint_refs
from .common import cache_base, codes_option, load_config
from .errors import ExitCode, fail, user_errors

if TYPE_CHECKING:
    from .lint_fix import FixOutcome


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
@click.option(
    "--fix",
    is_flag=True,
    help="Apply the safe fixes (the ones the editor offers) to the files, then report what is left.",
)
@click.option(
    "--diff",
    "show_diff",
    is_flag=True,
    help="Print the changes --fix would make as a unified diff; write nothing "
    "(exit 1 when there is one).",
)
@click.option(
    "--unsafe-fixes",
    is_flag=True,
    help="With --fix or --diff, also apply fixes that may change what the program means.",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Neither read nor write the lint cache (in the user cache directory, or "
    "$PROSEC_CACHE_DIR).",
)
@click.option("-q", "--quiet", is_flag=True, help="Do not print the summary line on stderr.")
def lint(
    paths: tuple[Path, ...],
    fmt: str,
    select: tuple[str, ...] | None,
    ignore: tuple[str, ...] | None,
    strict: bool | None,
    exclude: tuple[Path, ...],
    fix: bool,
    show_diff: bool,
    unsafe_fixes: bool,
    no_cache: bool,
    quiet: bool,
) -> None:
    """Check OpenProse contracts and report diagnostics.

    PATHS are `.prose.md` files or directories (searched recursively, skipping
    dist/, runs/, state/, deps/, .git/ and gitignored paths); the default is the
    current directory. Each file is checked with the rest of its project, as
    `prosec build` checks it: wiring, pattern expansion and lowering included, so a
    cycle or an unknown facet fails lint too. Settings come from each project's
    `prose.toml` ([lint] select, ignore, strict, severity.<code>, [[wiring.pin]]);
    flags win over the file. An unchanged project is not linted again: its findings
    come from the lint cache (beside the build cache; --no-cache skips it).

    \b
    Examples:
      prosec lint src/
      prosec lint --format sarif . > prosec.sarif
      prosec lint --select id_missing,section_retired --strict src/
      prosec lint --diff src/          preview the fixes
      prosec lint --fix src/           apply them (--unsafe-fixes: the unsafe ones too)

    Exit status: 0 when no error is reported (with --fix: none is left), 1 when any
    is (with --diff: when there is a change to show), 2 for a usage or I/O problem, 3
    when prosec hit a bug (an internal_error diagnostic).
    """
    targets = list(paths) or [Path(".")]
    config = load_config(targets[0]).with_overrides(select=select, ignore=ignore, strict=strict)
    with user_errors():
        refs = discover(targets, Path.cwd(), exclude, legacy=True)
    configs: dict[Path, Config] = {}

    def project_config(root: Path) -> Config:  # each project's own prose.toml, flags win
        if root not in configs:
            configs[root] = load_config(root).with_overrides(
                select=select, ignore=ignore, strict=strict
            )
        return configs[root]

    if unsafe_fixes and not (fix or show_diff):
        fail("--unsafe-fixes applies fixes only with --fix or --diff")
    if fix and show_diff:
        fail("--fix writes the fixes and --diff only shows them: pass one of the two")
    if fix or show_diff:
        from .lint_fix import fix_refs, unified_diff, write_fixed

        outcome = fix_refs(
            refs,
            lambda texts: lint_refs(refs, config, configs=project_config, overlay=texts),
            unsafe=unsafe_fixes,
        )
        if show_diff:
            sys.stdout.write(unified_diff(outcome))
            if not quiet:
                click.echo(_fix_summary(outcome, "would fix"), err=True)
            sys.exit(ExitCode.FINDINGS if outcome.changed else ExitCode.OK)
        with user_errors():
            written = write_fixed(outcome)
        for path in outcome.changed:
            if path not in written:
                click.echo(f"prosec: {path} changed while it was linted; not fixed", err=True)
        result = lint_refs(refs, config, configs=project_config)
        if not quiet:
            click.echo(_fix_summary(outcome, "fixed"), err=True)
    else:
        cache_dir = None if no_cache else cache_base()
        result = lint_refs(refs, config, configs=project_config, cache_dir=cache_dir)
    sys.stdout.write(report.render(result.diagnostics, fmt))
    if not quiet and fmt == "text":
        click.echo(report.summary(result.diagnostics, len(refs)), err=True)
    if any(d.code == "internal_error" for d in result.diagnostics):
        sys.exit(ExitCode.INTERNAL)
    sys.exit(ExitCode.FINDINGS if result.has_errors else ExitCode.OK)


def _fix_summary(outcome: FixOutcome, verb: str) -> str:
    files = len(outcome.changed)
    line = (
        f"prosec: {verb} {report.plural(len(outcome.fixed), 'finding')} "
        f"in {report.plural(files, 'file')}"
    )
    if outcome.unsafe:
        line += (
            f"; {report.plural(len(outcome.unsafe), 'more fix', 'more fixes')} may change what "
            "the program means: --unsafe-fixes applies them"
        )
    return line
