"""`prosec receipts verify` on hostile state: nothing a file holds makes it crash, hang or
say "ok" (issue 9, defect 10). Every problem is a finding with its file and position."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from .project import Project, intent


def chain(tmp_path: Path, toml: str | None = None) -> Project:
    doc = intent({"a": {}, "b": {}}, [("b", "a", "@atomic")])
    project = Project.create(tmp_path / "p", doc)
    if toml is not None:
        path = project.root / "prose.toml"
        path.write_text(path.read_text() + toml)
    project.run()
    project.world("a", {"v": 2})
    assert project.prosec("tick", "a").returncode == 0
    return project


def verify(project: Project, *args: str) -> tuple[int, list[dict[str, Any]]]:
    result = project.prosec("receipts", "verify", *(args or (".",)), "--json", timeout=60)
    assert "Traceback" not in result.stderr and result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)["findings"]


def test_a_symlinked_state_folder_is_verified(tmp_path: Path) -> None:
    project = chain(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    (project.root / "state").rename(elsewhere)
    (project.root / "state").symlink_to(elsewhere)
    assert verify(project) == (0, [])
    ledger = elsewhere / "world-model/b/receipts.jsonl"
    ledger.write_bytes(ledger.read_bytes().replace(b'"rendered"', b'"skipped"', 1))
    code, findings = verify(project)
    assert code == 1 and {f["node"] for f in findings} == {"b"}
    assert all(f["file"] == "state/world-model/b/receipts.jsonl" for f in findings)
    assert {f["position"] for f in findings} == {"1"}


HOSTILE_LINES = {
    "NaN": b'{"content_hash":NaN,"node":"a"}',
    "1e400": b'{"content_hash":1e400,"node":"a"}',
    "100k deep": b"[" * 100_000 + b"]" * 100_000,
    "5,000 digits": b'{"n":' + b"9" * 5000 + b"}",
    "not UTF-8": b'{"node":"\xff\xfe"}',
    "an array": b"[1,2,3]",
}


def test_hostile_ledger_lines_are_findings_never_crashes(tmp_path: Path) -> None:
    project = chain(tmp_path)
    ledger = project.root / "state/world-model/a/receipts.jsonl"
    kept = ledger.read_bytes()
    ledger.write_bytes(kept + b"\n".join(HOSTILE_LINES.values()) + b"\n")
    code, findings = verify(project)
    assert code == 1
    by_line = {
        f["position"]: f["message"] for f in findings if f["file"].endswith("a/receipts.jsonl")
    }
    assert sorted(by_line) == [str(n) for n in range(3, 3 + len(HOSTILE_LINES))]
    assert "NaN is not a JSON number" in by_line["3"]
    assert "1e400 is out of range" in by_line["4"]
    assert "nested deeper than 256 levels" in by_line["5"]
    assert "5000 digits" in by_line["6"]
    assert "not UTF-8" in by_line["7"]
    assert "not a JSON object" in by_line["8"]
    # the runtime refuses the same ledger, as a usage error (exit 2), not a crash
    run = project.prosec("run", ".")
    assert run.returncode == 2 and "cannot be trusted" in run.stderr, run.stderr


def test_published_names_that_collide_or_are_not_utf8_are_findings(tmp_path: Path) -> None:
    project = chain(tmp_path)
    published = project.root / "state/world-model/b/published"
    (published / "x").mkdir()
    (published / "x" / "y.json").write_text("1")
    (published / "x\\y.json").write_text("2")
    code, findings = verify(project)
    assert code == 1
    (finding,) = findings
    assert finding["node"] == "b" and "appears twice" in finding["message"]
    (published / "x\\y.json").unlink()
    os.close(os.open(bytes(published) + b"/\xff\xfe.json", os.O_CREAT | os.O_WRONLY))
    code, findings = verify(project)
    assert code == 1
    (finding,) = findings
    assert finding["node"] == "b" and "cannot be addressed" in finding["message"]
    text = project.prosec("receipts", "verify", ".")
    assert text.returncode == 1 and "Traceback" not in text.stderr


def test_fifos_and_symlink_loops_neither_hang_nor_crash(tmp_path: Path) -> None:
    project = chain(tmp_path)
    ledger = project.root / "state/world-model/a/receipts.jsonl"
    ledger.unlink()
    os.mkfifo(ledger)
    os.mkfifo(project.root / "state/world-model/b/published/stuck.json")
    (project.root / "runs" / "loop").symlink_to(project.root / "runs")
    (project.root / "state" / "self").symlink_to(project.root / "state")
    code, findings = verify(project)
    assert code == 1
    messages = {(f["node"], f["message"]) for f in findings}
    assert any(node == "a" and "not a regular file" in m for node, m in messages)
    assert any(node == "b" and "not a regular file" in m for node, m in messages)
    fifo = project.prosec("receipts", "verify", str(ledger))
    assert fifo.returncode == 2 and "not a regular file" in fifo.stderr


def test_the_configured_backend_is_verified(tmp_path: Path) -> None:
    project = chain(tmp_path, toml='\n[run]\nbackend = "sqlite"\n')
    assert not (project.root / "state/world-model").exists()
    assert verify(project) == (0, [])
    with sqlite3.connect(project.root / "state/prosec.db") as db:
        db.execute(
            "UPDATE receipt SET line = replace(line, '\"rendered\"', '\"skipped\"') "
            "WHERE id = (SELECT max(id) FROM receipt WHERE node = 'b')"
        )
    code, findings = verify(project)
    assert code == 1 and {f["node"] for f in findings} == {"b"}
    assert all(f["file"] == "state/prosec.db (table receipt)" for f in findings)
    assert verify(project, "state/prosec.db")[0] == 1


def test_a_bad_prose_toml_or_backend_is_a_usage_error(tmp_path: Path) -> None:
    project = chain(tmp_path)
    (project.root / "prose.toml").write_text("[run]\nbackend = 'nope'\n")
    result = project.prosec("receipts", "verify", ".")
    assert result.returncode == 2 and "prose.toml:2: run.backend" in result.stderr
    result = project.prosec("receipts", "verify", ".", "--backend", "postgres", env={})
    assert result.returncode == 2 and "OPENPROSE_POSTGRES_URL" in result.stderr


@pytest.mark.parametrize("point", ["after-pending", "after-ledger", "after-run-ledger"])
def test_a_commit_cut_by_a_crash_is_not_a_finding(tmp_path: Path, point: str) -> None:
    """A write-ahead record stands for the commit a crash cut: the next command rolls it
    forward, so verify does not judge that node's published version against it."""
    project = chain(tmp_path)
    project.world("a", {"v": 3})
    crashed = project.prosec("tick", "a", env={"PROSEC_CRASH_AT": f"{point}:a"})
    assert crashed.returncode < 0
    assert verify(project) == (0, [])
    assert project.prosec("status", ".").returncode == 0
