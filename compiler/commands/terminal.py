"""Terminal output: the build and reconcile progress bars and the status table.

prosec's only user of rich, imported when a bar or table is drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prosec.runtime.executor import Event

__all__ = ["BuildProgress", "Progress", "build_progress", "print_status"]

BuildProgress = Callable[[str, int, int], None]


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
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for line in header:
        console.print(line)
    table = Table("node", "last", "version", "receipts", "wake")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    for line in footer:
        console.print(line)
