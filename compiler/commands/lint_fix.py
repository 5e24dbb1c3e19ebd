"""`prosec lint --fix` / `--diff`: apply the fixes diagnostics carry, round after round.

The fixes are the ones the language server offers as code actions (the same `Fix`
values, applied by `prosec.compiler.fixes`). Each round lints the files as fixed so far
(in memory), applies every applicable non-overlapping fix, and stops when a round fixes
nothing, so a second `--fix` finds nothing left to do. `--diff` prints what `--fix` would
write; `--fix` writes each changed file atomically (temporary file, fsync, rename),
keeping its BOM, its line endings and its permission bits.
"""

from __future__ import annotations

import difflib
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from prosec.runtime.fsio import atomic_write_bytes

from ..diagnostics import Diagnostic
from ..discover import SourceRef
from ..fixes import apply_fixes, fixable
from ..lint import LintResult, decode_source, read_source

__all__ = ["FixOutcome", "fix_refs", "unified_diff", "write_fixed"]

MAX_ROUNDS = 10


@dataclass(frozen=True, slots=True)
class FixOutcome:
    result: LintResult  # the findings left once every fix is applied
    texts: dict[Path, str]  # resolved path → fixed text (normalized `\n` line endings)
    originals: dict[Path, str]  # the same files as they were
    displays: dict[Path, str]
    fixed: tuple[Diagnostic, ...]
    unsafe: tuple[Diagnostic, ...]  # left alone: they need --unsafe-fixes

    @property
    def changed(self) -> list[Path]:
        return sorted(p for p, text in self.texts.items() if text != self.originals[p])


def fix_refs(
    refs: Sequence[SourceRef],
    lint: Callable[[Mapping[Path, str]], LintResult],
    *,
    unsafe: bool,
) -> FixOutcome:
    """Lint, apply, repeat, on the given files only (never a project's other files)."""
    by_display = {ref.display: ref for ref in refs}
    texts: dict[Path, str] = {}
    originals: dict[Path, str] = {}
    displays: dict[Path, str] = {}
    fixed: list[Diagnostic] = []
    result = lint(texts)
    for _ in range(MAX_ROUNDS):
        groups: dict[str, list[Diagnostic]] = {}
        for found in result.diagnostics:
            if found.span.path in by_display and fixable(found, unsafe):
                groups.setdefault(found.span.path, []).append(found)
        progressed = False
        for display, chosen in sorted(groups.items()):
            ref = by_display[display]
            key = ref.path.resolve()
            if key not in texts:
                text, problem = read_source(ref)
                if text is None or problem is not None:
                    continue
                texts[key] = originals[key] = text
                displays[key] = display
            applied = apply_fixes(texts[key], chosen, unsafe=unsafe)
            if applied.text != texts[key]:
                texts[key] = applied.text
                fixed.extend(applied.fixed)
                progressed = True
        if not progressed:
            break
        result = lint(texts)
    left_unsafe = tuple(
        d for d in result.diagnostics if d.fix is not None and not d.fix.safe and not unsafe
    )
    return FixOutcome(result, texts, originals, displays, tuple(fixed), left_unsafe)


def unified_diff(outcome: FixOutcome) -> str:
    chunks: list[str] = []
    for path in outcome.changed:
        display = outcome.displays[path]
        chunks.extend(
            difflib.unified_diff(
                outcome.originals[path].splitlines(keepends=True),
                outcome.texts[path].splitlines(keepends=True),
                fromfile=f"a/{display}",
                tofile=f"b/{display}",
            )
        )
    return "".join(line if line.endswith("\n") else line + "\n" for line in chunks)


def write_fixed(outcome: FixOutcome) -> list[Path]:
    """Write each changed file atomically, as it was but for the fixes; the paths written."""
    written = []
    for path in outcome.changed:
        data = path.read_bytes()
        text, problem = decode_source(data, str(path))
        if problem is not None or text != outcome.originals[path]:
            continue  # changed on disk meanwhile: never overwrite someone else's edit
        new = outcome.texts[path]
        if b"\r\n" in data:
            new = new.replace("\n", "\r\n")
        encoded = new.encode("utf-8")
        if data.startswith(b"\xef\xbb\xbf"):
            encoded = b"\xef\xbb\xbf" + encoded
        atomic_write_bytes(path, encoded, mode=stat.S_IMODE(path.stat().st_mode))
        written.append(path)
    return written
