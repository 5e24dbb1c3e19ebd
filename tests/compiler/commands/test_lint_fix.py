"""`prosec lint --fix / --diff / --unsafe-fixes`, through the real command, on the corpus."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from prosec.compiler import config
from prosec.compiler.diagnostics import Diagnostic, Edit, Fix, Severity
from prosec.compiler.discover import discover
from prosec.compiler.fixes import apply_fixes
from prosec.compiler.ir import Span
from prosec.compiler.lint import lint_refs

from ...conftest import CORPUS, Runner

INVALID = CORPUS / "invalid"
# the codes whose corpus example carries a fix: a new fix joins this list with its example
FIXABLE = {"id_missing", "kind_retired", "section_retired", "wiring_mentioned"}


def _findings(run_prosec: Runner, root: Path, *args: str) -> list[dict[str, object]]:
    result = run_prosec("lint", "--format", "json", *args, ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    records: list[dict[str, object]] = json.loads(result.stdout)
    return records


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("code", sorted(FIXABLE))
def test_every_corpus_fix_applies_and_relints_clean(
    code: str, run_prosec: Runner, tmp_path: Path
) -> None:
    root = tmp_path / code
    shutil.copytree(INVALID / code, root)
    before = _findings(run_prosec, root, "--select", code)
    assert before and all("fix" in r for r in before), before
    preview = run_prosec("lint", "--diff", "--unsafe-fixes", ".", cwd=root)
    assert preview.returncode == 1, preview.stderr
    assert preview.stdout.startswith("--- a/")
    assert _tree(root) == _tree(INVALID / code)  # --diff writes nothing
    fixed = run_prosec("lint", "--fix", "--unsafe-fixes", ".", cwd=root)
    assert fixed.returncode in (0, 1), fixed.stderr
    assert f"prosec: fixed {len(before)} finding" in fixed.stderr
    assert _findings(run_prosec, root, "--select", code) == []
    # idempotent: a second --fix changes nothing, and --diff has nothing to show
    once = _tree(root)
    again = run_prosec("lint", "--fix", "--unsafe-fixes", ".", cwd=root)
    assert "prosec: fixed 0 findings in 0 files" in again.stderr
    assert _tree(root) == once
    assert run_prosec("lint", "--diff", "--unsafe-fixes", ".", cwd=root).stdout == ""


def test_the_corpus_lists_every_fixable_code() -> None:
    """FIXABLE above is exactly the set of corpus examples whose finding carries a fix."""
    found = set()
    for example in sorted(p for p in INVALID.iterdir() if p.is_dir()):
        try:
            settings = config.load(example)
        except config.ConfigError:
            continue  # config_invalid and friends: nothing is linted
        refs = discover([example], example, ())
        result = lint_refs(refs, settings, base=example)
        found |= {d.code for d in result.diagnostics if d.code == example.name and d.fix}
    assert found == FIXABLE


def test_unsafe_fixes_wait_for_the_flag(run_prosec: Runner, tmp_path: Path) -> None:
    shutil.copytree(INVALID / "kind_retired", tmp_path / "p")
    root = tmp_path / "p"
    safe_only = run_prosec("lint", "--fix", ".", cwd=root)
    assert safe_only.returncode == 1
    assert (
        "prosec: fixed 0 findings in 0 files; 1 more fix may change what the program means: "
        "--unsafe-fixes applies them"
    ) in safe_only.stderr
    assert _tree(root) == _tree(INVALID / "kind_retired")
    assert run_prosec("lint", "--unsafe-fixes", ".", cwd=root).returncode == 2
    assert run_prosec("lint", "--fix", "--diff", ".", cwd=root).returncode == 2


def test_fix_keeps_line_endings_bom_and_permissions(run_prosec: Runner, tmp_path: Path) -> None:
    source = (INVALID / "id_missing" / "no-id.prose.md").read_text(encoding="utf-8")
    path = tmp_path / "no-id.prose.md"
    path.write_bytes(b"\xef\xbb\xbf" + source.replace("\n", "\r\n").encode())
    os.chmod(path, 0o640)
    assert run_prosec("lint", "--fix", ".", cwd=tmp_path).returncode == 0
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"\nid: " in data
    assert data.count(b"\r\n") == data.count(b"\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp file left


def _finding(line: int, column: int, end: int, text: str, safe: bool = True) -> Diagnostic:
    span = Span(path="a", line=line, column=column, end_line=line, end_column=end)
    return Diagnostic(
        code="section_retired",
        severity=Severity.WARNING,
        message=text,
        span=span,
        fix=Fix(title=text, edits=(Edit(span=span, new_text=text),), safe=safe),
    )


def test_apply_fixes_whole_or_not_at_all() -> None:
    text = "abc\ndef\n"
    first, overlapping, later = (
        _finding(1, 1, 3, "X"),
        _finding(1, 2, 4, "Y"),
        _finding(2, 2, 3, "Z"),
    )
    applied = apply_fixes(text, [later, overlapping, first])
    assert applied.text == "Xc\ndZf\n" and applied.fixed == (first, later)
    # a fix computed for other text (past the line's end) is never guessed at
    assert apply_fixes(text, [_finding(1, 9, 9, "!")]).text == text
    unsafe = _finding(1, 1, 1, ">", safe=False)
    assert apply_fixes(text, [unsafe]).unsafe == (unsafe,)
    assert apply_fixes(text, [unsafe], unsafe=True).text == ">abc\ndef\n"
