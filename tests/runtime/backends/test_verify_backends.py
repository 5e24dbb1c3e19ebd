"""`prosec receipts verify` checks the durable store of every backend: a tampered line, a
table column that disagrees with its line, a lost newest receipt and a missing version
blob are each a finding with its place, exactly where `run` would refuse (or silently
lose) them; an untouched store verifies."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from ..project import Project, intent

DURABLE = [
    "filesystem",
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.postgres),
]


@dataclass
class Store:
    """A project run on one backend, and ways to tamper with what that backend stores."""

    project: Project
    backend: str
    env: dict[str, str]
    execute: Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]]

    def prosec(self, *args: str) -> Any:
        return self.project.prosec(*args, env=self.env)

    def verify(self, *extra: str) -> tuple[int, list[dict[str, Any]]]:
        result = self.prosec("receipts", "verify", ".", "--backend", self.backend, "--json", *extra)
        assert "Traceback" not in result.stderr and result.returncode in (0, 1), result.stderr
        return result.returncode, json.loads(result.stdout)["findings"]

    # -- tampering ------------------------------------------------------------------------

    def last_line(self, node: str) -> bytes:
        if self.backend == "filesystem":
            path = self.project.root / "state/world-model" / node / "receipts.jsonl"
            return path.read_bytes().splitlines()[-1]
        ((line,),) = self.execute(
            "SELECT line FROM {receipt} WHERE node = %s ORDER BY id DESC LIMIT 1", (node,)
        )
        return line.encode() if isinstance(line, str) else bytes(line)

    def replace_last_line(self, node: str, line: bytes | None) -> None:
        """Rewrite (or, with None, remove) the node's newest durable receipt."""
        if self.backend == "filesystem":
            path = self.project.root / "state/world-model" / node / "receipts.jsonl"
            lines = path.read_bytes().splitlines(keepends=True)[:-1]
            path.write_bytes(b"".join(lines) + (line + b"\n" if line is not None else b""))
            return
        ((row_id,),) = self.execute(
            "SELECT id FROM {receipt} WHERE node = %s ORDER BY id DESC LIMIT 1", (node,)
        )
        if line is None:
            self.execute("DELETE FROM {receipt} WHERE id = %s", (row_id,))
        else:
            self.execute("UPDATE {receipt} SET line = %s WHERE id = %s", (line, row_id))

    def set_status_column(self, node: str, status: str) -> None:
        self.execute(
            "UPDATE {receipt} SET status = %s WHERE id = "
            "(SELECT max(id) FROM {receipt} WHERE node = %s)",
            (status, node),
        )

    def drop_published_blob(self, node: str) -> None:
        if self.backend == "filesystem":
            folder = self.project.root / "state/world-model" / node
            address = (folder / "published/.version").read_text().strip()
            (folder / "versions" / f"sha256_{address[7:]}.bin").unlink()
            return
        # PostgreSQL keeps a foreign key from published to versions: empty the blob instead
        sql = (
            "DELETE FROM {version} WHERE version = (SELECT version FROM {published} WHERE node = %s)"
            if self.backend == "sqlite"
            else "UPDATE {version} SET artifact = NULL "
            "WHERE version = (SELECT version FROM {published} WHERE node = %s)"
        )
        self.execute(sql, (node,))


def make_store(request: pytest.FixtureRequest, tmp_path: Path, backend: str) -> Store:
    """A two-node project run twice on `backend` (b subscribes to a)."""
    project = Project.create(tmp_path / "p", intent({"a": {}, "b": {}}, [("b", "a", "@atomic")]))
    env: dict[str, str] = {}
    tables = {
        "receipt": "receipt",
        "version": "world_model_version",
        "published": "world_model_published",
    }
    execute: Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]]
    if backend == "postgres":
        schema = request.getfixturevalue("pg_schema")
        url = request.getfixturevalue("postgres_url")
        env = {"OPENPROSE_POSTGRES_URL": url, "OPENPROSE_POSTGRES_SCHEMA": schema}

        def execute(sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
            named = {k: f"{schema}.{v}" for k, v in tables.items()}
            with psycopg.connect(url, autocommit=True) as db:
                cursor = db.execute(sql.format(**named).encode(), args)
                return cursor.fetchall() if cursor.description else []

    else:
        db_path = project.root / "state/prosec.db"

        def execute(sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
            with sqlite3.connect(db_path) as db:
                return db.execute(sql.format(**tables).replace("%s", "?"), args).fetchall()

    fixture = Store(project, backend, env, execute)
    first = fixture.prosec("run", ".", "--backend", backend)
    assert first.returncode == 0, first.stderr
    project.world("a", {"v": 2})
    second = fixture.prosec("tick", "a", "--backend", backend)
    assert second.returncode == 0, second.stderr
    return fixture


@pytest.fixture(params=DURABLE)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return make_store(request, tmp_path, request.param)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def table_store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return make_store(request, tmp_path, request.param)


def test_an_untouched_store_verifies(store: Store) -> None:
    code, findings = store.verify()
    assert (code, findings) == (0, [])


def test_a_tampered_receipt_line_is_found_where_run_refuses_it(store: Store) -> None:
    line = store.last_line("b")
    store.replace_last_line("b", line.replace(b'"status":"rendered"', b'"status":"skipped"'))
    code, findings = store.verify()
    assert code == 1
    assert {f["node"] for f in findings} == {"b"}
    assert any("content_hash" in f["message"] for f in findings)
    run = store.prosec("run", ".", "--backend", store.backend)
    assert run.returncode == 2 and "cannot be trusted" in run.stderr


def test_a_table_column_that_disagrees_with_its_line_is_found(table_store: Store) -> None:
    table_store.set_status_column("a", "failed")
    code, findings = table_store.verify()
    assert code == 1
    (finding,) = findings
    assert finding["node"] == "a" and finding["position"].startswith("id ")
    assert "column status holds 'failed'" in finding["message"]


def test_the_newest_receipt_removed_is_found(store: Store) -> None:
    store.replace_last_line("a", None)
    # and from the ledger of the run that wrote it: no ledger holds it any more
    newest = max((store.project.root / "runs").glob("*/receipts/a.jsonl"), key=_started)
    newest.write_bytes(b"".join(newest.read_bytes().splitlines(keepends=True)[:-1]))
    code, findings = store.verify()
    assert code == 1
    (finding,) = findings
    assert finding["node"] == "a"
    assert "is not the one the last rendered receipt" in finding["message"]


def test_a_missing_published_blob_is_found(store: Store) -> None:
    store.drop_published_blob("b")
    code, findings = store.verify()
    assert code == 1
    assert {f["node"] for f in findings} == {"b"}
    assert any("missing from the stored versions" in f["message"] for f in findings)


def _started(ledger: Path) -> int:
    info = json.loads((ledger.parent.parent / "run.json").read_bytes())
    return int(info["started_ns"])
