"""SQLite holds seed 004's tables with the PostgreSQL shape (same tables, columns, keys
and index names), and a file an older prosec wrote upgrades in place."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from prosec.runtime.backends import BackendError
from prosec.runtime.backends.sqlite import LATEST, SqliteBackend
from prosec.runtime.receipts import receipt_line

from .test_conformance import receipt
from .test_pg_schema import SEED_COLUMNS, SEED_INDEXES, SEED_TABLES


def columns_by_table() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for item in SEED_COLUMNS:
        table, _, rest = item.partition(".")
        out.setdefault(table, set()).add(rest.split()[0])
    return out


def test_every_seed_table_column_and_index_is_in_the_file(tmp_path: Path) -> None:
    SqliteBackend(tmp_path / "prosec.db").close()
    db = sqlite3.connect(tmp_path / "prosec.db")
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables >= SEED_TABLES
    for table, wanted in columns_by_table().items():
        have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
        assert wanted <= have, (table, sorted(wanted - have))
    indexes = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    seed_names = {re.search(r"INDEX (\w+) ON", i).group(1) for i in SEED_INDEXES}  # type: ignore[union-attr]
    assert seed_names - indexes == {"idx_execution_metadata_gin"}  # SQLite has no GIN
    assert db.execute("PRAGMA user_version").fetchone() == (LATEST,)


OLD_LAYOUT = """
CREATE TABLE IF NOT EXISTS receipt (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT,
    node TEXT NOT NULL,
    content_hash TEXT NOT NULL UNIQUE,
    prev TEXT,
    status TEXT NOT NULL,
    line BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS receipt_node ON receipt(node, id);
CREATE TABLE IF NOT EXISTS world_model_version (
    version TEXT NOT NULL, node TEXT NOT NULL, artifact BLOB NOT NULL,
    PRIMARY KEY (node, version)
);
CREATE TABLE IF NOT EXISTS world_model_published (node TEXT PRIMARY KEY, version TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS x_kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS x_pending (node TEXT PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS x_inbox (id INTEGER PRIMARY KEY AUTOINCREMENT, wake TEXT NOT NULL);
"""


def test_a_file_an_older_prosec_wrote_upgrades_in_place(tmp_path: Path) -> None:
    path = tmp_path / "prosec.db"
    first = receipt("a", None, 1)
    with sqlite3.connect(path) as db:
        db.executescript(OLD_LAYOUT)
        db.execute(
            "INSERT INTO receipt (run_id, node, content_hash, prev, status, line) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                "20260101-000000-aaaaaa",
                "a",
                first["content_hash"],
                None,
                "rendered",
                receipt_line(first),
            ),
        )
        db.execute("""INSERT INTO x_kv (key, value) VALUES ('k', '{"v":1}')""")
    backend = SqliteBackend(path)
    assert backend.schema_version == LATEST
    assert backend.ledger("a") == [first]
    assert backend.get_value("k") == {"v": 1}
    backend.append_receipt("20260101-000000-bbbbbb", receipt("a", first["content_hash"], 2))
    backend.close()
    db = sqlite3.connect(path)
    rows = db.execute(
        "SELECT run_id, contract_fingerprint, json_extract(wake, '$.source'), status "
        "FROM receipt ORDER BY id"
    ).fetchall()
    assert rows == [
        ("20260101-000000-aaaaaa", first["contract_fingerprint"], "input", "rendered"),
        ("20260101-000000-bbbbbb", f"sha256:{2:064x}", "input", "rendered"),
    ]
    runs = db.execute("SELECT id, status FROM run ORDER BY id").fetchall()
    assert runs == [("20260101-000000-aaaaaa", "completed"), ("20260101-000000-bbbbbb", "running")]
    SqliteBackend(path).close()  # a second open changes nothing
    assert db.execute("SELECT count(*) FROM receipt").fetchone() == (2,)


def test_a_file_from_a_newer_prosec_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "prosec.db"
    SqliteBackend(path).close()
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {LATEST + 1}")
    with pytest.raises(BackendError, match="newer than this prosec"):
        SqliteBackend(path)
