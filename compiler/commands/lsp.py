"""`prosec lsp`: serve diagnostics, hover, navigation, actions and completion over stdio."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from .errors import fail


@click.command()
@click.option(
    "--stdio",
    is_flag=True,
    help="Talk LSP over stdin/stdout (the default and only transport; accepted for "
    "editors that always pass it).",
)
@click.option(
    "--debounce-ms",
    type=click.IntRange(min=0),
    default=25,
    show_default=True,
    help="Coalesce edits that come faster than this; the first edit after a pause is "
    "linted at once, a burst once it pauses this long (0: lint every edit).",
)
@click.option(
    "--log-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Append the server's log here (default: warnings on stderr).",
)
@click.option("-v", "--verbose", is_flag=True, help="Log every message (to --log-file or stderr).")
def lsp(stdio: bool, debounce_ms: int, log_file: Path | None, verbose: bool) -> None:
    """Run the OpenProse language server on stdin/stdout.

    Editors start it as `prosec lsp`. It checks `.prose.md` buffers as you type
    (the same codes and severities as `prosec lint` and `prosec build`, settings
    from the project's `prose.toml`), wires each project with Forme, and answers
    hover, go to definition, find references, document and workspace symbols,
    code actions and completion. See the README for editor set-up.
    """
    from importlib.util import find_spec

    from ..lsp.early import answer_initialize, take_pending

    if find_spec("pygls") is None or find_spec("lsprotocol") is None:
        fail("the language server needs the 'lsp' extra: pip install 'prosec[lsp]'")
    # the editor waits for this reply: it is sent before pygls and lsprotocol load
    early = take_pending() or answer_initialize(sys.stdin.fileno(), sys.stdout.fileno())
    try:
        from ..lsp.server import build
    except ModuleNotFoundError as exc:  # pygls and lsprotocol come with the `lsp` extra
        if (exc.name or "").partition(".")[0] not in ("pygls", "lsprotocol"):
            raise
        fail("the language server needs the 'lsp' extra: pip install 'prosec[lsp]'")
    if log_file is not None:
        from .inputs import open_log

        logging.basicConfig(stream=open_log(log_file, "--log-file"), level=logging.WARNING)
    else:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    if verbose:  # the protocol and the server, not every markdown-it rule
        for name in ("pygls", "prosec"):
            logging.getLogger(name).setLevel(logging.DEBUG)
    build(debounce=debounce_ms / 1000).start_io(early=early)
