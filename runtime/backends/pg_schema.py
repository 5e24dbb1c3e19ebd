"""The PostgreSQL schema as seed 004 lays it out, versioned with forward migrations.

`x_schema_version` (an extension table, seed 004's `x_` prefix) holds one row per
applied migration. `migrate()` brings a schema to the latest version in ONE transaction
under a transaction-scoped advisory lock, so two prosec processes opening a fresh
database at once never race (CREATE SCHEMA IF NOT EXISTS is not safe against itself),
and a database an older prosec created upgrades in place: migration 1 is the layout
every earlier prosec wrote (the four canonical tables and prosec's x_ tables, all
`IF NOT EXISTS`), migration 2 adds seed 004's other five tables (`execution`,
`bindings`, `agents`, `agent_segments`, `imports`) with every column, constraint and
index of the seed, migration 3 adds `x_attachment` (a large version's frame, which the
run folder's attachment file also holds, for machines without that folder).

PostgreSQL refuses an expression in a PRIMARY KEY or UNIQUE constraint, which the seed
writes for `bindings` (`COALESCE(execution_id, -1)`), `agents` and `agent_segments`
(`COALESCE(run_id, '__project__')`): those keys are unique expression indexes here,
which is what the seed's own `ON CONFLICT (name, run_id, COALESCE(execution_id, -1))`
needs to match.

The SQL is plain text with `{schema}` for the (validated, lowercase identifier) schema
name; running it is postgres.py's job (the only module that talks to psycopg).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LATEST", "MIGRATIONS", "VERSION_TABLE", "Migration"]

VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS {schema}.x_schema_version (
    version INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
"""


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    description: str
    ddl: str


_V1 = """
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

_V2 = """
CREATE TABLE IF NOT EXISTS {schema}.execution (
    id SERIAL PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES {schema}.run(id) ON DELETE CASCADE,
    statement_index INTEGER NOT NULL,
    statement_text TEXT,
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'executing', 'completed', 'failed', 'skipped')),
    started_at TIMESTAMPTZ,
    completed_at TIMESTAMPTZ,
    error_message TEXT,
    parent_id INTEGER REFERENCES {schema}.execution(id) ON DELETE CASCADE,
    metadata JSONB DEFAULT '{{}}'::jsonb
);
CREATE TABLE IF NOT EXISTS {schema}.bindings (
    name TEXT NOT NULL,
    run_id TEXT NOT NULL REFERENCES {schema}.run(id) ON DELETE CASCADE,
    execution_id INTEGER,
    binding TEXT NOT NULL CHECK (binding IN ('input', 'output', 'let', 'const')),
    value TEXT,
    source_statement TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    attachment_path TEXT,
    metadata JSONB DEFAULT '{{}}'::jsonb
);
CREATE UNIQUE INDEX IF NOT EXISTS bindings_scope_key
    ON {schema}.bindings (name, run_id, COALESCE(execution_id, -1));
CREATE TABLE IF NOT EXISTS {schema}.agents (
    name TEXT NOT NULL,
    run_id TEXT,
    scope TEXT NOT NULL CHECK (scope IN ('execution', 'project', 'user', 'custom')),
    memory TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    metadata JSONB DEFAULT '{{}}'::jsonb
);
CREATE UNIQUE INDEX IF NOT EXISTS agents_scope_key
    ON {schema}.agents (name, COALESCE(run_id, '__project__'));
CREATE TABLE IF NOT EXISTS {schema}.agent_segments (
    id SERIAL PRIMARY KEY,
    agent_name TEXT NOT NULL,
    run_id TEXT,
    segment_number INTEGER NOT NULL,
    timestamp TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    prompt TEXT,
    summary TEXT,
    metadata JSONB DEFAULT '{{}}'::jsonb
);
CREATE UNIQUE INDEX IF NOT EXISTS agent_segments_scope_key
    ON {schema}.agent_segments (agent_name, COALESCE(run_id, '__project__'), segment_number);
CREATE TABLE IF NOT EXISTS {schema}.imports (
    alias TEXT NOT NULL,
    run_id TEXT NOT NULL REFERENCES {schema}.run(id) ON DELETE CASCADE,
    source_ref TEXT NOT NULL,
    resolved_at TIMESTAMPTZ,
    requires_schema JSONB,
    ensures_schema JSONB,
    content_hash TEXT,
    metadata JSONB DEFAULT '{{}}'::jsonb,
    PRIMARY KEY (alias, run_id)
);
CREATE INDEX IF NOT EXISTS idx_execution_run_id ON {schema}.execution(run_id);
CREATE INDEX IF NOT EXISTS idx_execution_status ON {schema}.execution(status);
CREATE INDEX IF NOT EXISTS idx_execution_parent_id ON {schema}.execution(parent_id)
    WHERE parent_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_execution_metadata_gin
    ON {schema}.execution USING GIN (metadata jsonb_path_ops);
CREATE INDEX IF NOT EXISTS idx_bindings_run_id ON {schema}.bindings(run_id);
CREATE INDEX IF NOT EXISTS idx_bindings_execution_id ON {schema}.bindings(execution_id)
    WHERE execution_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_agents_run_id ON {schema}.agents(run_id) WHERE run_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_agents_project_scoped ON {schema}.agents(name)
    WHERE run_id IS NULL;
CREATE INDEX IF NOT EXISTS idx_agent_segments_lookup
    ON {schema}.agent_segments(agent_name, run_id);
"""

# the frames of large versions, for machines that do not hold the run folder (workers)
_V3 = """
CREATE TABLE IF NOT EXISTS {schema}.x_attachment (
    path TEXT PRIMARY KEY,
    data BYTEA NOT NULL
);
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "seed 004 canonical tables (run, versions, receipts) and prosec's x_ tables", _V1),
    Migration(2, "seed 004 execution, bindings, agents, agent_segments, imports and indexes", _V2),
    Migration(3, "x_attachment: large version frames in the database too", _V3),
)
LATEST = MIGRATIONS[-1].version
