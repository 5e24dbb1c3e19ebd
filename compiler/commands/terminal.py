"""Terminal output: the build and reconcile progress bars and the status table.

prosec's only user of rich, imported when a bar or table is drawn.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from prosec.runtime.executor import Event

__all__ = ["BuildProgress", "Progress", "build_progress", "color_enabled", "print_status"]

BuildProgress = Callable[[str, int, int], None]
CAPTURED_WIDTH = 200


def color_enabled(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """Styled output only on a terminal: `NO_COLOR` (any value) turns it off, `FORCE_COLOR`
    (any value) on, even when the output is captured; `NO_COLOR` wins (no-color.org)."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    isatty = getattr(stream, "isatty", None)
    # a terminal wraps at its width; a log or a pipe gets whole lines
    width = None if isatty and isatty() else CAPTURED_WIDTH
    if color_enabled(stream):
        return Console(stderr=stderr, force_terminal=True, width=width)
    # no escape sequence at all (NO_COLOR, or a pipe, a file, a CI log)
    return Console(
        stderr=stderr, force_terminal=False, no_color=True, color_system=None, width=width
    )


@contextmanager
def build_progress(enabled: bool) -> Iterator[BuildProgress | None]:
    """A rich progress line on stderr for `prosec build` when enabled; else None."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress as Bar

    with Bar(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("build", total=None)

        def update(stage: str, done: int, total: int) -> None:
            bar.update(task, description=stage, completed=done, total=total)

        yield update


class Progress:
    """The reconcile progress bar: rich progress on a terminal; silent otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.progress: Any = None
        self.task: Any = None
        if enabled:
            from rich.progress import BarColumn, Progress, TextColumn

            self.progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TextColumn("{task.completed}/{task.total}"),
                transient=True,
            )

    def __enter__(self) -> Progress:
        if self.progress is not None:
            self.progress.start()
            self.task = self.progress.add_task("reconciling", total=0)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()

    def __call__(self, event: Event) -> None:
        if self.progress is None:
            return
        if event.kind == "wave":
            self.progress.update(self.task, total=self.progress.tasks[0].total + event.total)
        elif event.kind in ("rendered", "skipped", "failed") and event.node:
            self.progress.update(self.task, advance=1, description=f"{event.node} {event.kind}")


def print_status(
    header: Sequence[str], rows: Sequence[Sequence[str]], footer: Sequence[str]
) -> None:
    """Print the status header lines, a node table and footer lines."""
    from rich.table import Table

    console = _console()
    for line in header:
        console.print(line)
    table = Table("node", "last", "version", "receipts", "last wake")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    for line in footer:
        console.print(line)
