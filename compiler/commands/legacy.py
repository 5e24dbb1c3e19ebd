"""Legacy `.prose/` runs (seed 000) through the VM: `prosec resume` of one.

The run's own program copy (`program.prose`) is compiled as its Contract Markdown form
(compiler/legacy.py), the folder is adopted as the current-layout run `runs/{same id}/`
with a journal of the steps it finished (runtime/vm/legacy_seed.py), and that run is
resumed as any program file run is. Resuming it again continues `runs/{id}/`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from .. import report
from .errors import ExitCode, fail, user_errors

__all__ = ["legacy_program", "resume_legacy"]


def legacy_program(root: Path, folder: Path) -> tuple[dict[str, Any], dict[str, bytes], str]:
    """The compiled intent (with its `vm` section) of the legacy run `folder`'s program,
    the sources as compiled, and the program's name (`tides.prose`)."""
    from prosec.runtime.legacy import LIMIT, read_state

    from ..codegen.vm import vm_section
    from ..legacy import convert
    from .run_file import _compile

    copy = folder / "program.prose"
    try:
        if copy.is_symlink() or copy.stat().st_size > LIMIT:
            fail(f"{copy}: not a plain file of at most {LIMIT} bytes")
        original = copy.read_bytes()
        text = original.decode("utf-8")
        state = read_state((folder / "state.md").read_text(encoding="utf-8", errors="replace"))
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{folder}: its program cannot be read ({exc})")
    name = Path(str(state.get("program") or "program.prose")).name
    if not name.endswith(".prose") or name.startswith("."):
        name = "program.prose"
    form = convert(text, name)
    virtual = f"{name}.md"
    _, target, result, contract = _compile(root / name, (virtual, form.markdown))
    if result.has_errors or result.intent is None:
        sys.stdout.write(report.render(result.diagnostics, "text"))
        click.echo(f"prosec: {folder}/program.prose does not compile; nothing ran", err=True)
        sys.exit(ExitCode.FINDINGS)
    raw: dict[str, Any] = dict(result.intent)
    raw["vm"] = vm_section(result.unit.project, target, contract.name)
    return raw, {virtual: form.markdown.encode("utf-8"), name: original}, name


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
    from prosec.runtime.vm.legacy_seed import adopt_legacy

    from .run_file import resume_file

    current = root / "runs" / folder.name
    if not current.exists():
        data = inspect_run(folder)
        if data["status"] == "complete":
            click.echo(f"run {folder.name} already finished (a complete legacy run)")
            sys.exit(ExitCode.OK)
        raw, compiled, origin = legacy_program(root, folder)
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
