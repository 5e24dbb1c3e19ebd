"""The `prosec` click group: every subcommand, each imported on first use."""

from __future__ import annotations

import importlib

import click

from .. import __version__
from ..cli import LAZY_COMMANDS
from .errors import ExitCode


class LazyGroup(click.Group):
    """A click group that imports each subcommand's module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None or cmd_name not in LAZY_COMMANDS:
            return command
        module_name, _, attr = LAZY_COMMANDS[cmd_name].partition(":")
        loaded = getattr(importlib.import_module(module_name), attr)
        if not isinstance(loaded, click.Command):  # pragma: no cover - wiring bug
            raise TypeError(f"{LAZY_COMMANDS[cmd_name]} is not a click command")
        return loaded

    def invoke(self, ctx: click.Context) -> object:
        # click would turn Ctrl-C into "Aborted!" and exit 1; a shell expects 128 + SIGINT
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("prosec: interrupted", err=True)
            ctx.exit(ExitCode.INTERRUPTED)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, "--version", "-V", prog_name="prosec")
def cli() -> None:
    """prosec: the deterministic compiler, linter and runtime for OpenProse.

    OpenProse programs are Markdown contracts (`*.prose.md`). prosec parses them,
    checks them, wires their `### Requires` needs to producers' `### Maintains`
    facets, writes the compiled intent to dist/, and runs it.

    \b
    Typical use:
      prosec lint src/                 report diagnostics (text, json, github, sarif)
      prosec build                     compile ./src into dist/manifest.next.json
      prosec run                       reconcile the active manifest

    Exit codes: 0 ok, 1 findings or failure, 2 usage or I/O error, 3 internal error.
    """
