"""The `prosec` command line: click commands; the only place that reads os.environ."""

from __future__ import annotations

import importlib
import sys

import click

from . import __version__
from .commands.errors import ExitCode

# Commands whose modules pull in heavy libraries (networkx, jsonschema, pygls) or the
# runtime are imported only when invoked, so `prosec lint FILE` starts fast.
LAZY_COMMANDS: dict[str, str] = {
    "lint": "prosec.compiler.commands.lint:lint",
    "build": "prosec.compiler.commands.build:build_command",
    "validate": "prosec.compiler.commands.validate:validate_command",
    "activate": "prosec.compiler.commands.activate:activate_command",
    "explain": "prosec.compiler.commands.explain:explain_command",
    "graph": "prosec.compiler.commands.graph:graph_command",
    "lsp": "prosec.compiler.commands.lsp:lsp",
    "run": "prosec.compiler.commands.run:run",
    "trigger": "prosec.compiler.commands.run:trigger",
    "tick": "prosec.compiler.commands.run:tick",
    "resume": "prosec.compiler.commands.run:resume",
    "status": "prosec.compiler.commands.status:status",
    "inspect": "prosec.compiler.commands.inspect:inspect",
    "receipts": "prosec.compiler.commands.receipts:receipts",
    "db": "prosec.compiler.commands.db:db",
    "install": "prosec.compiler.commands.install:install_command",
    "preflight": "prosec.compiler.commands.preflight:preflight_command",
    "serve": "prosec.compiler.commands.serve:serve_command",
    "devtools": "prosec.compiler.commands.serve:devtools_command",
    "test": "prosec.compiler.commands.test:test_command",
}


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


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run click, turning bugs into exit 3 with a short note."""
    try:
        cli.main(args=argv, prog_name="prosec", standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        click.echo("prosec: interrupted", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except Exception as exc:  # a bug, not a user error: say so briefly
        _disk_full(exc)  # exits 2 when it is one
        _report_bug(exc)
        sys.exit(ExitCode.INTERNAL)


def _disk_full(exc: BaseException) -> None:
    """A full disk or quota is the user's to fix, not a bug: say so (exit 2). Writes are
    atomic and a failed append is cut back, so nothing acknowledged was lost."""
    import errno

    full = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}
    if not isinstance(exc, OSError) or exc.errno not in full:
        return
    from .commands.errors import fail

    where = f" writing {exc.filename}" if exc.filename else ""
    fail(
        f"no space left on the device{where} ({exc.strerror or exc}); "
        "free some space and run the command again"
    )


def _report_bug(exc: BaseException) -> None:
    import os
    import traceback

    click.echo(
        f"prosec: internal error: {type(exc).__name__}: {exc}\n"
        "This is a bug in prosec; please report it with the command you ran. "
        "Set PROSEC_DEBUG=1 for the traceback.",
        err=True,
    )
    if os.environ.get("PROSEC_DEBUG"):
        traceback.print_exception(exc, file=sys.stderr)
