"""The SQLite backend's tables, as numbered migrations (`PRAGMA user_version` counts the
ones a file has): 1, the receipts, versions and the runner's own tables every prosec
wrote; 2, seed 004's other tables in one file's types."""

from __future__ import annotations

__all__ = ["LATEST", "MIGRATIONS"]

_V1 = """
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

# seed 004's other tables, in one file's types: TIMESTAMPTZ is ISO text defaulting to
# CURRENT_TIMESTAMP, JSONB is JSON text, SERIAL an AUTOINCREMENT rowid; the same keys,
# checks, foreign keys and indexes (but the GIN index, which SQLite has not)
_V2 = """
CREATE TABLE IF NOT EXISTS run (
    id TEXT PRIMARY KEY,
    root_path TEXT,
    root_source TEXT,
    started_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    status TEXT NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'completed', 'failed', 'interrupted')),
    state_mode TEXT NOT NULL DEFAULT 'sqlite',
    metadata TEXT DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS execution (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES run(id) ON DELETE CASCADE,
    statement_index INTEGER NOT NULL,
    statement_text TEXT,
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'executing', 'completed', 'failed', 'skipped')),
    started_at TEXT,
    completed_at TEXT,
    error_message TEXT,
    parent_id INTEGER REFERENCES execution(id) ON DELETE CASCADE,
    metadata TEXT DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS bindings (
    name TEXT NOT NULL,
    run_id TEXT NOT NULL REFERENCES run(id) ON DELETE CASCADE,
    execution_id INTEGER,
    binding TEXT NOT NULL CHECK (binding IN ('input', 'output', 'let', 'const')),
    value TEXT,
    source_statement TEXT,
    created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    attachment_path TEXT,
    metadata TEXT DEFAULT '{}'
);
CREATE UNIQUE INDEX IF NOT EXISTS bindings_scope_key
    ON bindings (name, run_id, COALESCE(execution_id, -1));
CREATE TABLE IF NOT EXISTS agents (
    name TEXT NOT NULL,
    run_id TEXT,
    scope TEXT NOT NULL CHECK (scope IN ('execution', 'project', 'user', 'custom')),
    memory TEXT,
    created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    metadata TEXT DEFAULT '{}'
);
CREATE UNIQUE INDEX IF NOT EXISTS agents_scope_key
    ON agents (name, COALESCE(run_id, '__project__'));
CREATE TABLE IF NOT EXISTS agent_segments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_name TEXT NOT NULL,
    run_id TEXT,
    segment_number INTEGER NOT NULL,
    timestamp TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    prompt TEXT,
    summary TEXT,
    metadata TEXT DEFAULT '{}'
);
CREATE UNIQUE INDEX IF NOT EXISTS agent_segments_scope_key
    ON agent_segments (agent_name, COALESCE(run_id, '__project__'), segment_number);
CREATE TABLE IF NOT EXISTS imports (
    alias TEXT NOT NULL,
    run_id TEXT NOT NULL REFERENCES run(id) ON DELETE CASCADE,
    source_ref TEXT NOT NULL,
    resolved_at TEXT,
    requires_schema TEXT,
    ensures_schema TEXT,
    content_hash TEXT,
    metadata TEXT DEFAULT '{}',
    PRIMARY KEY (alias, run_id)
);
CREATE INDEX IF NOT EXISTS idx_execution_run_id ON execution(run_id);
CREATE INDEX IF NOT EXISTS idx_execution_status ON execution(status);
CREATE INDEX IF NOT EXISTS idx_execution_parent_id ON execution(parent_id)
    WHERE parent_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_bindings_run_id ON bindings(run_id);
CREATE INDEX IF NOT EXISTS idx_bindings_execution_id ON bindings(execution_id)
    WHERE execution_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_agents_run_id ON agents(run_id) WHERE run_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_agents_project_scoped ON agents(name) WHERE run_id IS NULL;
CREATE INDEX IF NOT EXISTS idx_agent_segments_lookup ON agent_segments(agent_name, run_id);
ALTER TABLE receipt ADD COLUMN contract_fingerprint TEXT;
ALTER TABLE receipt ADD COLUMN wake TEXT;
ALTER TABLE receipt ADD COLUMN input_fingerprints TEXT;
ALTER TABLE receipt ADD COLUMN fingerprints TEXT;
ALTER TABLE receipt ADD COLUMN semantic_diff TEXT DEFAULT '{}';
ALTER TABLE receipt ADD COLUMN cost TEXT DEFAULT '{}';
ALTER TABLE receipt ADD COLUMN sig TEXT;
ALTER TABLE receipt ADD COLUMN created_at TEXT;
UPDATE receipt SET
    contract_fingerprint = json_extract(CAST(line AS TEXT), '$.contract_fingerprint'),
    wake = json_extract(CAST(line AS TEXT), '$.wake'),
    input_fingerprints = json_extract(CAST(line AS TEXT), '$.input_fingerprints'),
    fingerprints = json_extract(CAST(line AS TEXT), '$.fingerprints'),
    semantic_diff = json_extract(CAST(line AS TEXT), '$.semantic_diff'),
    cost = json_extract(CAST(line AS TEXT), '$.cost'),
    sig = json_extract(CAST(line AS TEXT), '$.sig')
    WHERE json_valid(CAST(line AS TEXT));
INSERT OR IGNORE INTO run (id, status)
    SELECT DISTINCT run_id, 'completed' FROM receipt WHERE run_id IS NOT NULL;
ALTER TABLE world_model_version ADD COLUMN attachment_path TEXT;
ALTER TABLE world_model_version ADD COLUMN created_at TEXT;
ALTER TABLE world_model_published ADD COLUMN updated_at TEXT
"""
# PRAGMA user_version: 1 is the layout every earlier prosec wrote (its user_version 0)
MIGRATIONS = ((1, _V1), (2, _V2))
LATEST = MIGRATIONS[-1][0]
