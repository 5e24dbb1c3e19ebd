"""The README's Diagnostics table lists exactly the registered codes, with their severities."""

from __future__ import annotations

import re

from prosec.compiler.diagnostics import CODES

from .conftest import REPO

_ROW = re.compile(r"^\| `([a-z_]+)` \| ([a-z]+)")


def diagnostics_rows() -> list[tuple[str, str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Diagnostics\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        match = _ROW.match(line)
        if match:
            rows.append((match.group(1), match.group(2)))
    return rows


def test_table_lists_every_code_once() -> None:
    codes = [code for code, _ in diagnostics_rows()]
    assert len(codes) == len(set(codes))
    assert sorted(codes) == sorted(CODES)


def test_table_states_default_severities() -> None:
    for code, severity in diagnostics_rows():
        assert severity == CODES[code].severity.value, code


def test_readme_documents_every_lint_format_and_option() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    for word in ("`text`", "`json`", "`github`", "`sarif`", "--select", "--ignore", "--strict"):
        assert word in text
    for word in ("--exclude", "[lint]", "[lint.severity]", "Exit status"):
        assert word in text
