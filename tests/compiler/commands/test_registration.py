"""Every `prosec` command lives in the one CLI layer (prosec.compiler.commands), and every
`--backend` option offers exactly the backend registry."""

from __future__ import annotations

import click
from prosec.compiler.cli import LAZY_COMMANDS, cli
from prosec.runtime.backends import BACKEND_NAMES


def all_commands() -> list[click.Command]:
    """Every command and subcommand `prosec --help` offers."""
    context = click.Context(cli)
    commands = [cli.get_command(context, name) for name in cli.list_commands(context)]
    found = [command for command in commands if command is not None]
    groups = [command for command in found if isinstance(command, click.Group)]
    return found + [sub for group in groups for sub in group.commands.values()]


# The commands `prosec --help` lists; a new command is added here on purpose.
COMMANDS = {
    "activate", "build", "db", "devtools", "explain", "graph", "inspect", "install", "lint",
    "lsp", "preflight", "receipts", "resume", "run", "serve", "status", "test", "tick", "trigger",
    "upgrade", "validate", "worker",
}  # fmt: skip


def test_every_command_is_in_the_cli_layer() -> None:
    assert set(LAZY_COMMANDS) == COMMANDS
    for name, target in LAZY_COMMANDS.items():
        assert target.startswith("prosec.compiler.commands."), name
    context = click.Context(cli)
    assert cli.list_commands(context) == sorted(LAZY_COMMANDS)
    for command in all_commands():
        assert command.callback is not None
        assert command.callback.__module__.startswith("prosec.compiler.commands."), command.name


def test_every_backend_option_offers_the_registry() -> None:
    choices = [
        list(param.type.choices)
        for command in all_commands()
        for param in command.params
        if param.name == "backend" and isinstance(param.type, click.Choice)
    ]
    assert len(choices) >= 6  # run, trigger, tick, resume, status, receipts list
    assert all(choice == list(BACKEND_NAMES) for choice in choices)
