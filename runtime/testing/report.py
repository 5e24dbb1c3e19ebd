"""A test's report, as upstream specifies it, in the run folder: `report.md`,
`test-result.json`, and the `[eval]` and `---test` markers appended to `vm.log.md`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..canonical import canonical_json
from ..fsio import atomic_write_bytes, atomic_write_text
from ..runs import RunDir

__all__ = ["render_report", "write_reports"]

REPORT = "report.md"
RESULT = "test-result.json"


def render_report(result: Mapping[str, Any]) -> str:
    """`# Test Report: {name}`, `Subject:`, `Result:`, then the assertions."""
    word = "PASS" if result["status"] == "pass" else "FAIL"
    lines = [
        f"# Test Report: {result['name']}",
        "",
        f"Subject: {result['subject']}",
        f"Result: {word}",
    ]
    if result["error"]:
        lines.append(f"Error: {result['error']}")
    for title, negated in (("Assertions", False), ("Negative Assertions", True)):
        items = [a for a in result["assertions"] if a["negative"] is negated]
        if not items:
            continue
        lines += ["", f"## {title}", ""]
        for item in items:
            mark = "✓" if item["ok"] else "✗"
            judged = " (judge)" if item["decided_by"] == "judge" else ""
            lines.append(f"{mark} {item['text']}{judged}")
            if not item["ok"]:
                lines.append(f"  Observed: {item['observed']}")
    return "\n".join(lines) + "\n"


def write_reports(run: RunDir, result: Mapping[str, Any]) -> None:
    atomic_write_text(run.path / REPORT, render_report(result))
    atomic_write_bytes(run.path / RESULT, canonical_json(dict(result)) + b"\n")
    event = run.last_event()
    for item in result["assertions"]:
        event += 1
        mark = "✓" if item["ok"] else "✗"
        line = f"{event}→ [eval] {item['text']} {mark}"
        if not item["ok"]:
            line += f" — observed: {item['observed']}"
        run.log(line)
    if result["status"] == "pass":
        run.log(f"---test PASS ({result['passed']}/{result['total']} assertions)")
    else:
        run.log(f"---test FAIL ({result['passed']}/{result['total']} assertions)")
