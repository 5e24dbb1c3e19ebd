"""Diagnostic reporters: text, JSON, GitHub workflow commands and SARIF 2.1.0."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from . import __version__
from .diagnostics import CODES, Diagnostic, Severity

FORMATS = ("text", "json", "github", "sarif")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render(diagnostics: Sequence[Diagnostic], fmt: str) -> str:
    renderers: dict[str, Callable[[Sequence[Diagnostic]], str]] = {
        "text": render_text,
        "json": render_json,
        "github": render_github,
        "sarif": render_sarif,
    }
    return renderers[fmt](diagnostics)


def render_text(diagnostics: Sequence[Diagnostic]) -> str:
    return "".join(
        f"{d.span.path}:{d.span.line}:{d.span.column}: {d.severity.value} {d.code} {d.message}\n"
        for d in diagnostics
    )


def summary(diagnostics: Sequence[Diagnostic], files: int) -> str:
    counts = Counter(d.severity for d in diagnostics)
    parts = [
        _plural(counts[Severity.ERROR], "error"),
        _plural(counts[Severity.WARNING], "warning"),
        _plural(counts[Severity.INFO], "info"),
    ]
    return f"{', '.join(parts)} in {_plural(files, 'file')}"


def _plural(count: int, word: str) -> str:
    return plural(count, word, word if word == "info" else None)


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 error`, `2 errors`; `many` spells an irregular plural (`1 fix`, `2 fixes`)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def record(d: Diagnostic) -> dict[str, Any]:
    """The JSON record of one diagnostic (also the shape the LSP and tests rely on)."""
    item: dict[str, Any] = {
        "code": d.code,
        "severity": d.severity.value,
        "message": d.message,
        "path": d.span.path,
        "line": d.span.line,
        "column": d.span.column,
        "end_line": d.span.end_line,
        "end_column": d.span.end_column,
    }
    if d.fix is not None:
        item["fix"] = {
            "title": d.fix.title,
            "safe": d.fix.safe,
            "edits": [
                {
                    "line": e.span.line,
                    "column": e.span.column,
                    "end_line": e.span.end_line,
                    "end_column": e.span.end_column,
                    "new_text": e.new_text,
                }
                for e in d.fix.edits
            ],
        }
    return item


def render_json(diagnostics: Sequence[Diagnostic]) -> str:
    return json.dumps([record(d) for d in diagnostics], indent=2, ensure_ascii=False) + "\n"


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def render_github(diagnostics: Sequence[Diagnostic]) -> str:
    command = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
    lines = []
    for d in diagnostics:
        s = d.span
        props = (
            f"file={_escape_property(s.path)},line={s.line},col={s.column},"
            f"endLine={s.end_line},endColumn={s.end_column},title={_escape_property(d.code)}"
        )
        lines.append(f"::{command[d.severity]} {props}::{_escape_data(d.message)}\n")
    return "".join(lines)


def render_sarif(diagnostics: Sequence[Diagnostic]) -> str:
    codes = sorted(CODES)
    index = {code: i for i, code in enumerate(codes)}
    rules = [
        {
            "id": code,
            "name": "".join(part.capitalize() for part in code.split("_")),
            "shortDescription": {"text": CODES[code].summary},
            "defaultConfiguration": {"level": _SARIF_LEVEL[CODES[code].severity]},
        }
        for code in codes
    ]
    results = []
    for d in diagnostics:
        s = d.span
        results.append(
            {
                "ruleId": d.code,
                "ruleIndex": index.get(d.code, 0),
                "level": _SARIF_LEVEL[d.severity],
                "message": {"text": d.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": s.path},
                            "region": {
                                "startLine": s.line,
                                "startColumn": s.column,
                                "endLine": s.end_line,
                                "endColumn": max(s.end_column, 1),
                            },
                        }
                    }
                ],
            }
        )
    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "prosec",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": rules,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
