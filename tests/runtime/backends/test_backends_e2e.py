"""Every backend drives the same reconcile to the same receipts; backend-specific
integrity and security checks (tamper detection, connection-string redaction)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import psycopg
import pytest
from prosec.runtime.backends import BackendError
from prosec.runtime.backends.postgres import PostgresBackend, find_url, redact
from prosec.runtime.executor import EngineOptions
from prosec.runtime.session import Project, open_project

from ..project import Project as Fixture
from ..project import intent
from .conftest import Factory

EDGES = [("b", "a", "@atomic"), ("c", "a", "@atomic"), ("d", "b", "@atomic"), ("d", "c", "@atomic")]


def reconcile(root: Path, factory: Factory) -> tuple[Project, list[str]]:
    project = open_project(root)
    project.backend = factory()
    project.bind_renders({})
    assert project.backend.try_lock()
    try:
        run = project.create_run("run", [], [])
        summary = project.engine(EngineOptions(jobs=2)).reconcile(
            run, set(project.intent.order), {}
        )
        project.finish(run, summary)
    finally:
        project.backend.unlock()
    if project.backend.ephemeral:
        shutil.rmtree(run.path.parent)
    return project, summary.rendered


def test_same_receipts_on_every_backend(factory: Factory, tmp_path: Path) -> None:
    fixture = Fixture.create(tmp_path / "p", intent({n: {} for n in "abcd"}, EDGES))
    fixture.world("a", {"v": 1})
    project, rendered = reconcile(fixture.root, factory)
    assert sorted(rendered) == ["a", "b", "c", "d"]
    _, again = reconcile(fixture.root, factory)
    assert again == []
    reference = Fixture.create(tmp_path / "ref", intent({n: {} for n in "abcd"}, EDGES))
    reference.world("a", {"v": 1})
    assert reference.run()["failed"] == []
    for node in "abcd":
        assert project.backend.ledger(node) == reference.ledger(node)


def test_sqlite_tampering_is_detected(tmp_path: Path) -> None:
    from prosec.runtime.backends.sqlite import SqliteBackend

    fixture = Fixture.create(tmp_path / "p", intent({"a": {}}, []))
    db = tmp_path / "p/state/prosec.db"
    reconcile(fixture.root, lambda: SqliteBackend(db))
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE receipt SET line = replace(line, 'rendered', 'skipped')")
    with pytest.raises(BackendError, match="cannot be trusted"):
        SqliteBackend(db).heads(["a"])


@pytest.mark.postgres
def test_postgres_tampering_is_detected(pg_schema: str, postgres_url: str, tmp_path: Path) -> None:
    fixture = Fixture.create(tmp_path / "p", intent({"a": {}}, []))
    reconcile(fixture.root, lambda: PostgresBackend(postgres_url, schema=pg_schema))
    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute(
            f"UPDATE {pg_schema}.receipt SET line = "
            "convert_to(replace(convert_from(line, 'UTF8'), 'rendered', 'skipped'), 'UTF8')"
        )
    with pytest.raises(BackendError, match="cannot be trusted"):
        PostgresBackend(postgres_url, schema=pg_schema).heads(["a"])


SECRET_URL = "postgresql://alice:s3cret-pw@127.0.0.1:1/test"


def test_postgres_errors_never_contain_the_connection_string() -> None:
    with pytest.raises(BackendError) as caught:
        PostgresBackend(SECRET_URL)
    text = str(caught.value) + repr(caught.value.args)
    assert "s3cret-pw" not in text and SECRET_URL not in text and "alice" not in text
    assert "$OPENPROSE_POSTGRES_URL" in text
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_redact() -> None:
    message = f"could not connect to {SECRET_URL} as alice with s3cret-pw"
    assert redact(message, SECRET_URL) == "could not connect to *** as *** with ***"


def test_url_precedence(tmp_path: Path) -> None:
    env = {"DATABASE_URL": "postgresql://d/x", "OPENPROSE_POSTGRES_URL": "postgresql://e/x"}
    assert find_url(tmp_path, env) == ("OPENPROSE_POSTGRES_URL", "postgresql://e/x")
    (tmp_path / ".env").write_text("OPENPROSE_POSTGRES_URL=postgresql://f/x\n")
    assert find_url(tmp_path, env) == ("OPENPROSE_POSTGRES_URL", "postgresql://f/x")
    assert find_url(tmp_path / "none", {"DATABASE_URL": "postgresql://d/x"}) == (
        "DATABASE_URL",
        "postgresql://d/x",
    )


@pytest.mark.postgres
def test_cli_with_postgres_never_prints_the_url(
    pg_schema: str, postgres_url: str, tmp_path: Path
) -> None:
    fixture = Fixture.create(tmp_path / "p", intent({"a": {}, "b": {}}, [("b", "a", "@atomic")]))
    env = {"OPENPROSE_POSTGRES_URL": postgres_url, "OPENPROSE_POSTGRES_SCHEMA": pg_schema}
    first = fixture.prosec("run", ".", "--backend", "postgres", "--json", env=env)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["rendered"] == ["a", "b"]
    second = fixture.prosec("run", ".", "--backend", "postgres", "--json", env=env)
    assert json.loads(second.stdout)["rendered"] == []
    status = fixture.prosec("status", ".", "--backend", "postgres", "--json", env=env)
    outputs = [first, second, status]
    assert all(postgres_url not in r.stdout + r.stderr for r in outputs)
    assert "$OPENPROSE_POSTGRES_URL" in json.loads(status.stdout)["backend"]
    run_files = "".join(
        p.read_text(errors="replace") for p in (fixture.root / "runs").rglob("*") if p.is_file()
    )
    assert postgres_url not in run_files
    bad = fixture.prosec(
        "run", ".", "--backend", "postgres", env={"OPENPROSE_POSTGRES_URL": SECRET_URL}
    )
    assert bad.returncode == 2
    assert "s3cret-pw" not in bad.stderr + bad.stdout and "Traceback" not in bad.stderr


def test_cli_in_context_narrates_and_keeps_nothing(tmp_path: Path) -> None:
    fixture = Fixture.create(tmp_path / "p", intent({n: {} for n in "abcd"}, EDGES))
    result = fixture.prosec("run", ".", "--backend", "in-context")
    assert result.returncode == 0, result.stderr
    # seed 003: the state mode announced, a parallel wave in node order with its
    # progress, whichever render finished first
    assert result.stderr.splitlines() == [
        "OpenProse Run Start",
        "   State mode: in-context (the system is small, it fits in context)",
        "1→ a ✓",
        "∥ [b c]",
        "∥ [b✓ c→]",
        "∥ [b✓ c✓] done",
        "2→ d ✓",
        "---end",
    ]
    assert not (fixture.root / "runs").exists()
    assert not (fixture.root / "state").exists()
