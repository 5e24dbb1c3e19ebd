"""Legacy `.prose/` runs (seed 000) through the VM: `prosec resume` of one.

The run's own program copy (`program.prose`) is compiled as its Contract Markdown form
(compiler/legacy.py), the folder is adopted as the current-layout run `runs/{same id}/`
with a journal of the steps it finished (runtime/vm/legacy_seed.py), and that run is
resumed as any program file run is. Resuming it again continues `runs/{id}/`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..legacy_compile import LegacyProgramError, compile_legacy
from .errors import ExitCode, user_errors

__all__ = ["resume_legacy"]


def resume_legacy(
    root: Path,
    folder: Path,
    renders: tuple[str, ...],
    jobs: int | None,
    timeout: float | None,
    backend: str | None,
    as_json: bool,
) -> None:
    """Continue the legacy run `folder` as `runs/{its id}/`, none of its steps redone."""
    from prosec.runtime.inspection import inspect_run
    from prosec.runtime.runs import RunDir
    from prosec.runtime.vm.legacy_adopt import adopt_legacy

    from .run_file import legacy_memory, resume_file

    current = root / "runs" / folder.name
    if not current.exists():
        data = inspect_run(folder)
        if data["status"] == "complete":
            click.echo(f"run {folder.name} already finished (a complete legacy run)")
            sys.exit(ExitCode.OK)
        try:
            raw, compiled, origin = compile_legacy(root, folder)
        except LegacyProgramError as exc:
            sys.stdout.write(exc.report)
            click.echo(f"prosec: {exc}; nothing ran", err=True)
            sys.exit(ExitCode.FINDINGS if exc.report else ExitCode.USAGE)
        legacy_memory(root, raw["vm"])
        with user_errors():
            adopted = adopt_legacy(
                root.resolve(),
                raw,
                folder,
                data,
                compiled=compiled,
                origin=origin,
                backend=backend or "filesystem",
            )
        click.echo(
            f"prosec: legacy run {folder.name} continues as {adopted.path} "
            f"({_count(adopted.path)} finished steps taken from {folder}/bindings/)",
            err=True,
        )
    resume_file(root, RunDir(current), renders, jobs, timeout, backend, as_json)


def _count(run: Path) -> int:
    journal = run / "vm" / "journal.jsonl"
    return len(journal.read_bytes().splitlines()) if journal.is_file() else 0
