"""The PostgreSQL catalog prosec leaves after a run is seed 004's, item by item: every
table, column (type, nullability, default), constraint and index, plus only the
documented prosec extensions. Versioned migrations upgrade an older prosec's database in
place, under an advisory lock, and refuse a newer one."""

from __future__ import annotations

import re
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from prosec.runtime.backends import BackendError
from prosec.runtime.backends.pg_schema import LATEST, MIGRATIONS
from prosec.runtime.backends.postgres import PostgresBackend

from ..project import Project as Fixture
from ..project import intent
from .pg_catalog import Catalog, catalog
from .test_backends_e2e import reconcile

pytestmark = pytest.mark.postgres

SEED_TABLES = {
    "run",
    "execution",
    "world_model_version",
    "world_model_published",
    "receipt",
    "bindings",
    "agents",
    "agent_segments",
    "imports",
}
_NOW = "timestamp with time zone NOT NULL DEFAULT now()"
_META = "jsonb DEFAULT '{}'::jsonb"
SEED_COLUMNS = {
    "run.id text NOT NULL",
    "run.root_path text",
    "run.root_source text",
    f"run.started_at {_NOW}",
    f"run.updated_at {_NOW}",
    "run.status text NOT NULL DEFAULT 'running'::text",
    "run.state_mode text NOT NULL DEFAULT 'postgres'::text",
    f"run.metadata {_META}",
    "execution.id integer NOT NULL DEFAULT nextval('openprose.execution_id_seq'::regclass)",
    "execution.run_id text NOT NULL",
    "execution.statement_index integer NOT NULL",
    "execution.statement_text text",
    "execution.status text NOT NULL DEFAULT 'pending'::text",
    "execution.started_at timestamp with time zone",
    "execution.completed_at timestamp with time zone",
    "execution.error_message text",
    "execution.parent_id integer",
    f"execution.metadata {_META}",
    "world_model_version.version text NOT NULL",
    "world_model_version.node text NOT NULL",
    "world_model_version.artifact bytea",
    "world_model_version.attachment_path text",
    f"world_model_version.created_at {_NOW}",
    "world_model_published.node text NOT NULL",
    "world_model_published.version text NOT NULL",
    f"world_model_published.updated_at {_NOW}",
    "receipt.id integer NOT NULL DEFAULT nextval('openprose.receipt_id_seq'::regclass)",
    "receipt.run_id text",
    "receipt.node text NOT NULL",
    "receipt.contract_fingerprint text NOT NULL",
    "receipt.wake jsonb NOT NULL",
    "receipt.input_fingerprints jsonb NOT NULL",
    "receipt.fingerprints jsonb NOT NULL",
    f"receipt.semantic_diff {_META}",
    "receipt.prev text",
    "receipt.status text NOT NULL",
    f"receipt.cost {_META}",
    "receipt.sig jsonb NOT NULL",
    f"receipt.created_at {_NOW}",
    "bindings.name text NOT NULL",
    "bindings.run_id text NOT NULL",
    "bindings.execution_id integer",
    "bindings.binding text NOT NULL",
    "bindings.value text",
    "bindings.source_statement text",
    f"bindings.created_at {_NOW}",
    f"bindings.updated_at {_NOW}",
    "bindings.attachment_path text",
    f"bindings.metadata {_META}",
    "agents.name text NOT NULL",
    "agents.run_id text",
    "agents.scope text NOT NULL",
    "agents.memory text",
    f"agents.created_at {_NOW}",
    f"agents.updated_at {_NOW}",
    f"agents.metadata {_META}",
    "agent_segments.id integer NOT NULL DEFAULT "
    "nextval('openprose.agent_segments_id_seq'::regclass)",
    "agent_segments.agent_name text NOT NULL",
    "agent_segments.run_id text",
    "agent_segments.segment_number integer NOT NULL",
    f"agent_segments.timestamp {_NOW}",
    "agent_segments.prompt text",
    "agent_segments.summary text",
    f"agent_segments.metadata {_META}",
    "imports.alias text NOT NULL",
    "imports.run_id text NOT NULL",
    "imports.source_ref text NOT NULL",
    "imports.resolved_at timestamp with time zone",
    "imports.requires_schema jsonb",
    "imports.ensures_schema jsonb",
    "imports.content_hash text",
    f"imports.metadata {_META}",
}


def _any(column: str, *values: str) -> str:
    return f"CHECK (({column} = ANY (ARRAY[{', '.join(f'{v!r}::text' for v in values)}])))"


_CASCADE = "REFERENCES openprose.run(id) ON DELETE CASCADE"
SEED_CONSTRAINTS = {
    "run: PRIMARY KEY (id)",
    "run: " + _any("status", "running", "completed", "failed", "interrupted"),
    "execution: PRIMARY KEY (id)",
    f"execution: FOREIGN KEY (run_id) {_CASCADE}",
    "execution: FOREIGN KEY (parent_id) REFERENCES openprose.execution(id) ON DELETE CASCADE",
    "execution: " + _any("status", "pending", "executing", "completed", "failed", "skipped"),
    "world_model_version: PRIMARY KEY (version)",
    "world_model_published: PRIMARY KEY (node)",
    "world_model_published: FOREIGN KEY (version) "
    "REFERENCES openprose.world_model_version(version)",
    "receipt: PRIMARY KEY (id)",
    f"receipt: FOREIGN KEY (run_id) {_CASCADE}",
    "receipt: " + _any("status", "rendered", "skipped", "failed"),
    f"bindings: FOREIGN KEY (run_id) {_CASCADE}",
    "bindings: " + _any("binding", "input", "output", "let", "const"),
    "agents: " + _any("scope", "execution", "project", "user", "custom"),
    "agent_segments: PRIMARY KEY (id)",
    "imports: PRIMARY KEY (alias, run_id)",
    f"imports: FOREIGN KEY (run_id) {_CASCADE}",
}
SEED_INDEXES = {
    # the seed's expression keys (a PRIMARY KEY / UNIQUE constraint cannot hold one)
    "CREATE UNIQUE INDEX bindings_scope_key ON openprose.bindings USING btree "
    "(name, run_id, COALESCE(execution_id, '-1'::integer))",
    "CREATE UNIQUE INDEX agents_scope_key ON openprose.agents USING btree "
    "(name, COALESCE(run_id, '__project__'::text))",
    "CREATE UNIQUE INDEX agent_segments_scope_key ON openprose.agent_segments USING btree "
    "(agent_name, COALESCE(run_id, '__project__'::text), segment_number)",
    "CREATE INDEX idx_execution_run_id ON openprose.execution USING btree (run_id)",
    "CREATE INDEX idx_execution_status ON openprose.execution USING btree (status)",
    "CREATE INDEX idx_execution_parent_id ON openprose.execution USING btree (parent_id) "
    "WHERE (parent_id IS NOT NULL)",
    "CREATE INDEX idx_execution_metadata_gin ON openprose.execution USING gin "
    "(metadata jsonb_path_ops)",
    "CREATE INDEX idx_bindings_run_id ON openprose.bindings USING btree (run_id)",
    "CREATE INDEX idx_bindings_execution_id ON openprose.bindings USING btree (execution_id) "
    "WHERE (execution_id IS NOT NULL)",
    "CREATE INDEX idx_agents_run_id ON openprose.agents USING btree (run_id) "
    "WHERE (run_id IS NOT NULL)",
    "CREATE INDEX idx_agents_project_scoped ON openprose.agents USING btree (name) "
    "WHERE (run_id IS NULL)",
    "CREATE INDEX idx_agent_segments_lookup ON openprose.agent_segments USING btree "
    "(agent_name, run_id)",
}
SEED: Catalog = {
    "tables": SEED_TABLES,
    "columns": SEED_COLUMNS,
    "constraints": SEED_CONSTRAINTS,
    "indexes": SEED_INDEXES,
}
# what prosec adds, and nothing else: the receipt's canonical line (verified on load)
# and its hash, and the x_ extension tables the seed invites
EXTRAS: Catalog = {
    "tables": {"x_attachment", "x_kv", "x_pending", "x_inbox", "x_schema_version"},
    "columns": {
        "receipt.content_hash text NOT NULL",
        "receipt.line bytea NOT NULL",
        "x_attachment.path text NOT NULL",
        "x_attachment.data bytea NOT NULL",
        "x_kv.key text NOT NULL",
        "x_kv.value jsonb NOT NULL",
        "x_pending.node text NOT NULL",
        "x_pending.record bytea NOT NULL",
        "x_inbox.id bigint NOT NULL DEFAULT nextval('openprose.x_inbox_id_seq'::regclass)",
        "x_inbox.wake bytea NOT NULL",
        "x_schema_version.version integer NOT NULL",
        "x_schema_version.description text NOT NULL",
        f"x_schema_version.applied_at {_NOW}",
    },
    "constraints": {
        "receipt: UNIQUE (content_hash)",
        "x_attachment: PRIMARY KEY (path)",
        "x_kv: PRIMARY KEY (key)",
        "x_pending: PRIMARY KEY (node)",
        "x_inbox: PRIMARY KEY (id)",
        "x_schema_version: PRIMARY KEY (version)",
    },
    "indexes": {"CREATE INDEX receipt_node_id ON openprose.receipt USING btree (node, id)"},
}


@pytest.fixture
def db(postgres_url: str) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        yield conn


@pytest.fixture
def scratch(db: psycopg.Connection[tuple[object, ...]]) -> Iterator[str]:
    """A second fresh schema (the seed's DDL runs there), dropped afterwards."""
    name = f"prosec_t_{secrets.token_hex(4)}"
    yield name
    db.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def assert_same(actual: Catalog, expected: Catalog) -> None:
    """Item by item: what is missing and what is extra, per kind."""
    problems = {
        kind: {
            "missing": sorted(expected[kind] - actual[kind]),
            "extra": sorted(actual[kind] - expected[kind]),
        }
        for kind in expected
        if expected[kind] != actual[kind]
    }
    assert problems == {}


def union(a: Catalog, b: Catalog) -> Catalog:
    return {kind: a[kind] | b[kind] for kind in a}


def test_the_catalog_after_a_run_is_seed_004_plus_the_listed_extensions(
    pg_schema: str, postgres_url: str, tmp_path: Path, db: psycopg.Connection[tuple[object, ...]]
) -> None:
    fixture = Fixture.create(tmp_path / "p", intent({"a": {}, "b": {}}, [("b", "a", "@atomic")]))
    reconcile(fixture.root, lambda: PostgresBackend(postgres_url, schema=pg_schema))
    assert_same(catalog(db, pg_schema), union(SEED, EXTRAS))
    versions = db.execute(f"SELECT version FROM {pg_schema}.x_schema_version ORDER BY 1")
    assert [r[0] for r in versions.fetchall()] == [m.version for m in MIGRATIONS]


def test_a_database_an_older_prosec_created_upgrades_in_place(
    pg_schema: str, postgres_url: str, db: psycopg.Connection[tuple[object, ...]]
) -> None:
    """The old layout (no x_schema_version, four seed tables and the x_ tables), with
    data in it: opening it migrates to the latest version and keeps every row."""
    db.execute(f"CREATE SCHEMA {pg_schema}")
    db.execute(OLD_LAYOUT.format(schema=pg_schema).encode())
    db.execute(f"INSERT INTO {pg_schema}.run (id) VALUES ('20260101-000000-aaaaaa')")
    db.execute(f"""INSERT INTO {pg_schema}.x_kv (key, value) VALUES ('k', '{{"v": 1}}')""")
    backend = PostgresBackend(postgres_url, schema=pg_schema)
    assert backend.schema_version == LATEST
    assert backend.get_value("k") == {"v": 1}
    backend.close()
    assert_same(catalog(db, pg_schema), union(SEED, EXTRAS))
    runs = db.execute(f"SELECT id, status FROM {pg_schema}.run").fetchall()
    assert runs == [("20260101-000000-aaaaaa", "running")]
    # opening again changes nothing (one row per migration)
    PostgresBackend(postgres_url, schema=pg_schema).close()
    count = db.execute(f"SELECT count(*) FROM {pg_schema}.x_schema_version").fetchone()
    assert count == (LATEST,)


def test_concurrent_first_opens_migrate_once(
    pg_schema: str, postgres_url: str, db: psycopg.Connection[tuple[object, ...]]
) -> None:
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            PostgresBackend(postgres_url, schema=pg_schema).close()
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    rows = db.execute(f"SELECT version FROM {pg_schema}.x_schema_version ORDER BY 1").fetchall()
    assert [r[0] for r in rows] == [m.version for m in MIGRATIONS]


def test_a_schema_from_a_newer_prosec_is_refused_untouched(
    pg_schema: str, postgres_url: str, db: psycopg.Connection[tuple[object, ...]]
) -> None:
    PostgresBackend(postgres_url, schema=pg_schema).close()
    db.execute(
        f"INSERT INTO {pg_schema}.x_schema_version (version, description) "
        f"VALUES ({LATEST + 1}, 'from the future')"
    )
    with pytest.raises(BackendError, match=rf"version {LATEST + 1}, newer than"):
        PostgresBackend(postgres_url, schema=pg_schema)


@pytest.mark.conformance
def test_the_seed_ddl_itself_gives_the_expected_catalog(
    seeds: Path,
    scratch: str,
    pg_schema: str,
    postgres_url: str,
    db: psycopg.Connection[tuple[object, ...]],
) -> None:
    """Seed 004's Core Schema, run as written (its expression keys made unique indexes,
    the one change PostgreSQL needs), gives exactly SEED; prosec's schema holds every
    item of it and adds only EXTRAS."""
    ddl = seed_ddl(next(seeds.glob("004_*.txt")).read_text(encoding="utf-8"))
    db.execute(ddl.replace("openprose.", f"{scratch}.").replace(" openprose;", f" {scratch};"))
    from_seed = catalog(db, scratch)
    assert_same(from_seed, SEED)
    PostgresBackend(postgres_url, schema=pg_schema).close()
    assert_same(catalog(db, pg_schema), union(from_seed, EXTRAS))


def seed_ddl(text: str) -> str:
    """The SQL of the seed's Core Schema section, expression keys as unique indexes."""
    section = text[text.index("Core Schema") : text.index("Schema Conventions")]
    section = section[section.index("CREATE SCHEMA") :]
    section = section[: section.rindex(";") + 1]

    def table(match: re.Match[str]) -> str:
        name, body = match.group(1), match.group(2)
        keys = []
        lines = []
        for line in body.split("\n"):
            key = re.match(r"\s*(PRIMARY KEY|UNIQUE) \((.*COALESCE.*)\)", line)
            if key:
                keys.append(key.group(2))
            else:
                lines.append(line)
        kept = "\n".join(lines)
        if keys:  # the line before the dropped key loses its trailing comma
            kept = re.sub(r",(\s*(--[^\n]*)?\s*)$", r"\1", kept.rstrip())
        indexes = "".join(
            f"\nCREATE UNIQUE INDEX {name}_scope_key ON openprose.{name} ({key});" for key in keys
        )
        return f"CREATE TABLE IF NOT EXISTS openprose.{name} ({kept}\n);{indexes}"

    return re.sub(
        r"CREATE TABLE IF NOT EXISTS openprose\.(\w+) \((.*?)\n\);", table, section, flags=re.S
    )


# the layout every prosec before schema versioning created (written out here, not
# taken from pg_schema, so the test fails if migration 1 ever drifts from it)
OLD_LAYOUT = """
CREATE TABLE IF NOT EXISTS {schema}.run (
    id TEXT PRIMARY KEY,
    root_path TEXT,
    root_source TEXT,
    started_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    status TEXT NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'completed', 'failed', 'interrupted')),
    state_mode TEXT NOT NULL DEFAULT 'postgres',
    metadata JSONB DEFAULT '{{}}'::jsonb
);
CREATE TABLE IF NOT EXISTS {schema}.world_model_version (
    version TEXT PRIMARY KEY,
    node TEXT NOT NULL,
    artifact BYTEA,
    attachment_path TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE TABLE IF NOT EXISTS {schema}.world_model_published (
    node TEXT PRIMARY KEY,
    version TEXT NOT NULL REFERENCES {schema}.world_model_version(version),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE TABLE IF NOT EXISTS {schema}.receipt (
    id SERIAL PRIMARY KEY,
    run_id TEXT REFERENCES {schema}.run(id) ON DELETE CASCADE,
    node TEXT NOT NULL,
    contract_fingerprint TEXT NOT NULL,
    wake JSONB NOT NULL,
    input_fingerprints JSONB NOT NULL,
    fingerprints JSONB NOT NULL,
    semantic_diff JSONB DEFAULT '{{}}'::jsonb,
    prev TEXT,
    status TEXT NOT NULL CHECK (status IN ('rendered', 'skipped', 'failed')),
    cost JSONB DEFAULT '{{}}'::jsonb,
    sig JSONB NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    content_hash TEXT NOT NULL UNIQUE,
    line BYTEA NOT NULL
);
CREATE INDEX IF NOT EXISTS receipt_node_id ON {schema}.receipt(node, id);
CREATE TABLE IF NOT EXISTS {schema}.x_kv (key TEXT PRIMARY KEY, value JSONB NOT NULL);
CREATE TABLE IF NOT EXISTS {schema}.x_pending (node TEXT PRIMARY KEY, record BYTEA NOT NULL);
CREATE TABLE IF NOT EXISTS {schema}.x_inbox (id BIGSERIAL PRIMARY KEY, wake BYTEA NOT NULL);
"""
