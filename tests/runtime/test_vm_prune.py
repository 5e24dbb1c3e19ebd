"""`prosec db prune` drops the VM run data of old runs on every durable backend alike:
the SQL stores' tables and the filesystem's runs/{id}/vm/state.jsonl (which keeps its
run events, re-chained, as the SQL stores keep the run row)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from prosec.runtime.vm.statelog import STATE, StateLog

from . import test_vm_conformance as conformance
from .test_vm_conformance import CASES, DURABLE, Store

store_for = conformance.store_for  # the suite's fixture: one store per backend


@pytest.mark.parametrize("store_for", DURABLE, indirect=True)
def test_db_prune_drops_the_vm_rows_of_old_runs_on_every_durable_backend(
    store_for: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry, table, args = CASES["vm-bindings"]
    store: Store = store_for("vm-bindings", entry, table)
    ids = [store.run(args, monkeypatch)["run_id"] for _ in range(3)]
    runs = store.project.root / "runs"

    def rows(run_id: str) -> dict[str, Any]:
        return store.rows({"run_id": run_id, "path": str(runs / run_id)})

    for command in ("build", "activate"):  # `db prune` opens the project's compiled intent
        done = store.project.prosec(command, env=store.env)
        assert done.returncode == 0, done.stderr
    full = rows(ids[2])
    assert full["executions"] and full["bindings"]
    pruned = store.project.prosec(
        "db", "prune", ".", "--backend", store.kind, "--keep", "1", "--json", env=store.env
    )
    assert pruned.returncode == 0, pruned.stderr
    assert json.loads(pruned.stdout)["pruned"] == [ids[1], ids[0]]
    for run_id in ids[:2]:
        left = rows(run_id)
        assert left["run"]["status"] == "completed"
        assert [left[k] for k in ("executions", "bindings", "agents", "segments", "imports")] == [
            [],
            [],
            [],
            [],
            [],
        ]
    assert rows(ids[2]) == full
    if store.kind == "filesystem":  # the log still verifies: its chain was rebuilt
        events = StateLog(runs / ids[0] / STATE).events
        assert [e["op"] for e in events] == ["run", "run"]
        assert json.loads(store.project.prosec("inspect", ids[0], "--json").stdout)["vm"] == rows(
            ids[0]
        )
    again = store.project.prosec("db", "prune", ".", "--backend", store.kind, env=store.env)
    assert again.returncode == 0 and "pruned the run data of 0 runs" in again.stdout
