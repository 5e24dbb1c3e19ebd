"""A VM run's recorded rows read back in one shape, whatever the store: the SQL tables
(PostgreSQL, SQLite, an in-context run's in-memory database) or the filesystem's
vm/state.jsonl. `prosec inspect` and the conformance suite read them this way."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .statelog import read_state

if TYPE_CHECKING:
    from ..backends import Backend
    from ..backends.sqlstate import SqlState

__all__ = ["read_rows", "vm_rows"]

_USER = "__user__"


def read_rows(backend: Backend, run_dir: Path, run_id: str) -> dict[str, Any]:
    """{run, executions, bindings, agents, segments, imports} of one run."""
    state = backend.run_state
    if state is None:
        memory = getattr(backend, "vm_state", None)
        if not callable(memory):
            return read_state(run_dir)
        state = memory(run_dir.parent)
    assert state is not None
    return _sql(state, run_id)


def _sql(state: SqlState, run_id: str) -> dict[str, Any]:
    run = state.run(run_id)
    agents, segments = [], []
    for agent, found in state.agents_of(run_id):
        name = agent["name"].removeprefix(_USER) if agent["scope"] == "user" else agent["name"]
        agents.append(
            {
                "name": name,
                "scope": agent["scope"],
                "memory": agent["memory"],
                "metadata": agent["metadata"],
            }
        )
        segments += [
            {
                "agent_name": name,
                "scope": agent["scope"],
                "segment_number": s["segment_number"],
                "prompt": s["prompt"],
                "summary": s["summary"],
                "metadata": s["metadata"],
            }
            for s in found
        ]
    return {
        "run": {"status": run["status"], "metadata": run["metadata"]} if run else {},
        "executions": [_pick(dict(row), _EXECUTION) for row in state.executions(run_id)],
        "bindings": [_pick(dict(row), _BINDING) for row in state.bindings(run_id)],
        "agents": sorted(agents, key=lambda a: (a["name"], a["scope"])),
        "segments": sorted(
            segments, key=lambda s: (s["agent_name"], s["scope"], s["segment_number"])
        ),
        "imports": [
            {
                "alias": row["alias"],
                "source_ref": row["source_ref"],
                "content_hash": row["content_hash"],
                "requires": row["requires_schema"],
                "ensures": row["ensures_schema"],
                "metadata": row["metadata"],
            }
            for row in state.imports(run_id)
        ],
    }


_EXECUTION = (
    "id",
    "statement_index",
    "statement_text",
    "status",
    "error_message",
    "parent_id",
    "metadata",
)
_BINDING = ("name", "execution_id", "binding", "value", "source_statement", "metadata")


def _pick(row: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: row[k] for k in keys}


def vm_rows(root: Path, run_dir: Path, env: Mapping[str, str]) -> dict[str, Any] | None:
    """The rows of a VM run folder from the backend it ran on (`run.json`'s `backend`);
    None for a run that is not a VM run, or ran in-context (nothing of it is durable)."""
    from ..backends import open_backend
    from ..runs import RunDir

    try:
        info = RunDir(run_dir).info()
    except (OSError, ValueError):
        return None
    name = str(info.get("backend", "filesystem"))
    if info.get("kind") != "vm" or name == "in-context":
        return None
    if name == "filesystem":
        return read_state(run_dir)
    backend = open_backend(name, root, env)
    try:
        return read_rows(backend, run_dir, run_dir.name)
    finally:
        backend.close()
