"""The `prosec` command line: click commands; the only place that reads os.environ."""

from __future__ import annotations

import sys

from . import __version__
from .commands.exitcodes import ExitCode

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
    "worker": "prosec.compiler.commands.worker:worker",
    "inspect": "prosec.compiler.commands.inspect:inspect",
    "receipts": "prosec.compiler.commands.receipts:receipts",
    "db": "prosec.compiler.commands.db:db",
    "install": "prosec.compiler.commands.install:install_command",
    "preflight": "prosec.compiler.commands.preflight:preflight_command",
    "serve": "prosec.compiler.commands.serve:serve_command",
    "devtools": "prosec.compiler.commands.serve:devtools_command",
    "test": "prosec.compiler.commands.test:test_command",
    "upgrade": "prosec.compiler.commands.upgrade:upgrade_command",
}


def __getattr__(name: str) -> object:
    """The click group (`cli`, `LazyGroup`) loads on first use: `prosec --version`
    answers before click is imported."""
    if name in ("cli", "LazyGroup"):
        from .commands import group

        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_VERSION_FLAGS = (["--version"], ["-V"])


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run click, turning bugs into exit 3 with a short note."""
    if (sys.argv[1:] if argv is None else list(argv)) in _VERSION_FLAGS:
        # what click's version option prints, without importing click
        sys.stdout.write(f"prosec, version {__version__}\n")
        sys.stdout.flush()
        sys.exit(ExitCode.OK)
    _early_lsp(sys.argv[1:] if argv is None else list(argv))
    import click

    from .commands.group import cli

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


# Commands that only compile and write files: no threads and no exit-time work of
# their own, so their process may end with `os._exit` (see `console`).
_HARD_EXIT = frozenset({"build", "lint"})


def console() -> None:
    """The `prosec` executable: `main`. A build or a lint holds millions of small IR
    objects, and freeing them one by one as the interpreter exits costs up to a quarter
    of a one-file rebuild; the system takes the whole heap back at once. So `build` and
    `lint` end with `os._exit` once stdout and stderr are flushed (mypy does the same);
    every other command exits as usual. `main` itself never hard-exits: tests call it."""
    args = sys.argv[1:]
    if not args or args[0] not in _HARD_EXIT:
        main()
        return
    try:
        main()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    if code is None:
        code = 0
    if not isinstance(code, int):  # what the interpreter does with sys.exit("message")
        sys.stderr.write(f"{code}\n")
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: let the interpreter report it as usual
        sys.exit(code)
    import os

    os._exit(code)


def _early_lsp(args: list[str]) -> None:
    """`prosec lsp` answers the editor's `initialize` before even click loads (see
    lsp/early.py), when its arguments are ones click will surely accept."""
    if args[:1] != ["lsp"]:
        return
    rest = args[1:]
    while rest:
        if rest[0] in ("--stdio", "-v", "--verbose"):
            rest = rest[1:]
        elif rest[0] == "--debounce-ms" and len(rest) > 1 and rest[1].isdigit():
            rest = rest[2:]
        else:
            return  # anything else (--help, a log file, a typo): the command decides
    from importlib.util import find_spec

    if find_spec("pygls") is None or find_spec("lsprotocol") is None:
        return  # the command says which extra is missing
    from .lsp import early

    early.PENDING = early.answer_initialize(sys.stdin.fileno(), sys.stdout.fileno())


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

    import click

    click.echo(
        f"prosec: internal error: {type(exc).__name__}: {exc}\n"
        "This is a bug in prosec; please report it with the command you ran. "
        "Set PROSEC_DEBUG=1 for the traceback.",
        err=True,
    )
    if os.environ.get("PROSEC_DEBUG"):
        traceback.print_exception(exc, file=sys.stderr)
