"""A legacy run's program (`.prose/runs/{id}/program.prose`) compiled as its Contract
Markdown form, with the `vm` section the VM runs (for `prosec resume` and `prosec
upgrade` of a legacy run). Problems are a LegacyProgramError, never an exit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import report

__all__ = ["LegacyProgramError", "compile_legacy"]


class LegacyProgramError(Exception):
    """A legacy run's program that cannot be read or does not compile (`report` holds
    the diagnostics as text, when there are)."""

    def __init__(self, message: str, report: str = "") -> None:
        super().__init__(message)
        self.report = report


def compile_legacy(root: Path, folder: Path) -> tuple[dict[str, Any], dict[str, bytes], str]:
    """The compiled intent (with its `vm` section) of the legacy run `folder`'s program
    (compiled as a source of the project at `root`), the sources as compiled, and the
    program's name (`tides.prose`). Raises LegacyProgramError."""
    from prosec.runtime.legacy import LIMIT, read_state

    from .codegen.vm import vm_section
    from .config import load as load_config
    from .legacy import convert
    from .pipeline import compile_texts, importer, read_sources

    copy = folder / "program.prose"
    try:
        if copy.is_symlink() or copy.stat().st_size > LIMIT:
            raise LegacyProgramError(f"{copy}: not a plain file of at most {LIMIT} bytes")
        original = copy.read_bytes()
        text = original.decode("utf-8")
        state = read_state((folder / "state.md").read_text(encoding="utf-8", errors="replace"))
    except (OSError, UnicodeDecodeError) as exc:
        raise LegacyProgramError(f"{folder}: its program cannot be read ({exc})") from None
    name = Path(str(state.get("program") or "program.prose")).name
    if not name.endswith(".prose") or name.startswith("."):
        name = "program.prose"
    form = convert(text, name)
    virtual = f"{name}.md"
    try:
        config = load_config(root)
    except ValueError as exc:  # a bad prose.toml
        raise LegacyProgramError(str(exc)) from None
    texts, unreadable = read_sources(root, config)
    texts = [(p, t) for p, t in texts if p != virtual] + [(virtual, form.markdown)]
    result = compile_texts(texts, config, extra=unreadable, imports=importer(root))
    own = [f for f in result.unit.project.files if f.path == virtual]
    contracts = [c for c in own[0].contracts if not c.inline] if own else []
    if result.has_errors or result.intent is None or not contracts:
        raise LegacyProgramError(
            f"{copy} does not compile", report.render(result.diagnostics, "text")
        )
    raw: dict[str, Any] = dict(result.intent)
    raw["vm"] = vm_section(result.unit.project, virtual, contracts[0].name)
    return raw, {virtual: form.markdown.encode("utf-8"), name: original}, name
