"""A legacy run's program (`.prose/runs/{id}/program.prose`) compiled as its Contract
Markdown form, with the `vm` section the VM runs (for `prosec resume` and `prosec
upgrade` of a legacy run). Problems are a LegacyProgramError, never an exit."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import report

if TYPE_CHECKING:
    from .config import Config
    from .ir import Contract
    from .pipeline import CompileResult

__all__ = ["LegacyProgramError", "compile_legacy", "compile_source", "legacy_forms"]


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
    result, contracts = compile_source(root, config, virtual, form.markdown, legacy=name)
    if result.has_errors or result.intent is None or not contracts:
        raise LegacyProgramError(
            f"{copy} does not compile", report.render(result.diagnostics, "text")
        )
    raw: dict[str, Any] = dict(result.intent)
    raw["vm"] = vm_section(result.unit.project, virtual, contracts[0].name)
    return raw, {virtual: form.markdown.encode("utf-8"), name: original}, name


def compile_source(
    root: Path,
    config: Config,
    path: str,
    text: str | None,
    *,
    file: Path | None = None,
    legacy: str | None = None,
) -> tuple[CompileResult, list[Contract]]:
    """The project at `root` compiled with the source `path` (relative to it) as `text`
    in memory, in place of any file there (None: as the source walk found it, or read
    from `file` when the walk did not find it), and the contracts of that source (no
    inline ones). `legacy` is the `.prose` program `text` is the Contract Markdown form
    of: its own `legacy_program` finding is dropped, it is what is being compiled.
    What `prosec run FILE`, `prosec resume` and `prosec upgrade` of a legacy run share.
    Raises OSError or UnicodeDecodeError when `file` cannot be read."""
    from .pipeline import compile_texts, importer, read_sources

    texts, unreadable = read_sources(root, config)
    if legacy is not None:
        unreadable = [d for d in unreadable if (d.code, d.span.path) != ("legacy_program", legacy)]
    if text is not None:
        texts = [(p, t) for p, t in texts if p != path] + [(path, text)]
    elif file is not None and path not in {p for p, _ in texts}:
        texts.append((path, file.read_text(encoding="utf-8")))
    result = compile_texts(texts, config, extra=unreadable, imports=importer(root))
    own = [f for f in result.unit.project.files if f.path == path]
    return result, [c for c in own[0].contracts if not c.inline] if own else []


def legacy_forms(root: Path, config: Config) -> list[tuple[str, str]]:
    """(`NAME.prose.md`, its text) of the Contract Markdown form of each legacy program
    the project at `root` has: its `.prose` sources, and the program copy of each legacy
    run in `.prose/runs/` (what `prosec resume` and `prosec upgrade` compile). What
    `prosec install` and `prosec preflight` read the `use`d dependencies of, beside the
    `.prose.md` sources: a legacy program's dependencies are installed as theirs are.
    An unreadable or undecodable file is left out (lint and build report it)."""
    from prosec.runtime.legacy import LIMIT, legacy_runs

    from .discover import LEGACY_SUFFIX, discover
    from .legacy import convert
    from .pipeline import source_root

    found = [
        (ref.display, ref.path)
        for ref in discover([source_root(root, config)], root, legacy=True)
        if ref.display.endswith(LEGACY_SUFFIX)
    ]
    for run in legacy_runs(root):
        found.append((run.relative_to(root).as_posix() + "/program.prose", run / "program.prose"))
    out = []
    for display, path in found:
        try:
            if path.is_symlink() or path.stat().st_size > LIMIT:
                continue
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out.append((f"{display}.md", convert(text, display).markdown))
    return out
