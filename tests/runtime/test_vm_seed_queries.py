"""Seed 004's queries, unchanged, against databases prosec's VM wrote (SQLite attached as
`openprose`, PostgreSQL in schema `openprose`): scope resolution through the execution
chain, the direct scope lookup, run status, the resume position, parallel branch status
and agent memory lookup. The base tier runs our own statement of each query; the
conformance tier cuts the query text out of the seed document itself at test time."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..conftest import REPO
from .backends.sql_stores import Store, database, postgres_store, sqlite_store
from .vm.support import VmProject

PROGRAMS = {
    "pottery-firing": ("vm-blocks", ["--pots", '["jug", "bowl"]']),
    "seed-swap": ("vm-agents", ["--member", "Ada", "--packets", '["runner beans"]']),
    "market-stalls": ("vm-parallel", ["--basket", "figs"]),
}
SEED_RUN = "20260116-143052-a7b3c9"  # the run id the seed's examples use


@dataclass
class Written:
    store: Store
    runs: dict[str, str]  # entry -> run id

    def row(self, run: str, key: str) -> int:
        """The id of a run's execution row for the step `key`."""
        found = self.store.query(
            "SELECT id, metadata FROM openprose.execution WHERE run_id = %s ORDER BY id", run
        )
        ids = [int(i) for i, m in found if _json(m).get("key") == key]
        assert len(ids) == 1, (key, found)
        return ids[0]


def _json(value: Any) -> dict[str, Any]:
    import json

    return value if isinstance(value, dict) else json.loads(value)


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def written(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Written]:
    """The three programs run with the real `prosec run` into one project's store."""
    tmp = tmp_path_factory.mktemp(request.param)
    project = VmProject.create(tmp, "vm-blocks", "pottery-firing")
    for program in ("vm-agents", "vm-parallel"):
        shutil.copytree(REPO / "corpus" / program / "src", project.root / "src", dirs_exist_ok=True)
    env = {"OPENPROSE_USER_ROOT": str(tmp / "user")}

    def run_all(store: Store) -> Written:
        runs = {}
        for entry, (_, args) in PROGRAMS.items():
            project.entry = f"src/{entry}.prose.md"
            outcome = project.run("--backend", store.kind, *args, env={**env, **store.env})
            assert outcome["ok"], outcome
            runs[entry] = outcome["run_id"]
        return Written(store, runs)

    if request.param == "sqlite":
        yield run_all(sqlite_store(project.root / "state" / "prosec.db", project.root / "runs"))
        return
    with database(request.getfixturevalue("postgres_url")) as url:
        yield run_all(postgres_store(url, project.root / "runs"))


# -- our own statement of each query (base tier) ---------------------------------------

OURS = {
    "scope": (
        "with recursive scope_chain as ("
        " select id, parent_id from openprose.execution where id = {start}"
        " union all select e.id, e.parent_id from openprose.execution e"
        " join scope_chain s on e.id = s.parent_id)"
        " select b.* from openprose.bindings b where b.name = '{name}' and b.run_id = '{run}'"
        " and (b.execution_id in (select id from scope_chain) or b.execution_id is null)"
        " order by case when b.execution_id is null then 1 else 0 end,"
        " b.execution_id desc nulls last limit 1"
    ),
    "direct": (
        "select * from openprose.bindings where name = '{name}' and run_id = '{run}'"
        " and (execution_id = {start} or execution_id = {outer} or execution_id is null)"
        " order by execution_id desc nulls last limit 1"
    ),
    "status": "select id, status from openprose.run where id = '{run}'",
    "position": (
        "select statement_index, statement_text, status from openprose.execution"
        " where run_id = '{run}' and status = 'executing' order by id desc limit 1"
    ),
    "branches": (
        "select metadata->>'branch' as branch, status from openprose.execution"
        " where run_id = '{run}' and metadata->>'parallel_id' = '{parallel}'"
        " and parent_id is not null"
    ),
    "run_agent": "select memory from openprose.agents where name = '{agent}' and run_id = '{run}'",
    "project_agent": "select memory from openprose.agents where name = '{agent}' and run_id is null",
    "agents": "select name, scope, memory from openprose.agents where run_id = '{run}' or run_id is null",
}


def check_queries(written: Written, queries: dict[str, str]) -> None:
    """Each query, given this run's values, answers what the VM wrote."""
    q = written.store.query
    pottery = written.runs["pottery-firing"]
    first, second = (written.row(pottery, f"main/{n}#glaze") for n in (1, 2))
    inside = written.row(pottery, "main/1#glaze/1")  # `return glazed` in the first block

    def found(query: str, **values: Any) -> list[tuple[Any, ...]]:
        text = queries[query]
        for name, value in values.items():
            text = text.replace("{" + name + "}", str(value))
        return q(text)

    (row,) = found("scope", start=inside, name="glazed", run=pottery)
    assert row[2] == first and row[4].startswith("glaze-pot:pot(") and '"jug"' in row[4]
    (row,) = found("scope", start=written.row(pottery, "main/2#glaze/1"), name="pot", run=pottery)
    assert (row[2], row[3], row[4]) == (second, "input", "bowl")
    (row,) = found("scope", start=inside, name="pots", run=pottery)  # the root scope's
    assert row[2] is None and row[3] == "input"
    (row,) = found("direct", start=inside, outer=first, name="coats", run=pottery)
    assert (row[2], row[4]) == (first, "2")
    assert found("status", run=pottery) == [(pottery, "completed")]
    assert found("position", run=pottery) == []  # nothing left executing
    stalls = written.runs["market-stalls"]
    branches = found("branches", run=stalls, parallel="main/0")
    assert sorted(branches) == [
        ("bread", "completed"),
        ("cheese", "completed"),
        ("fruit", "completed"),
    ]
    swap = written.runs["seed-swap"]
    assert found("run_agent", agent="steward", run=swap) == [("# Agent Memory: steward\n",)]
    assert found("project_agent", agent="archivist") == [("# Agent Memory: archivist\n",)]
    # a custom folder's agent (`persist: "society/ledger"`): run_id NULL, as a project one
    assert found("project_agent", agent="ledger") == [("# Agent Memory: ledger\n",)]
    agents = {(name, scope) for name, scope, _ in found("agents", run=swap)}
    assert agents == {
        ("steward", "execution"),
        ("archivist", "project"),
        ("__user__almanac", "user"),
        ("ledger", "custom"),
    }


def test_our_statement_of_the_seed_queries_reads_what_the_vm_wrote(written: Written) -> None:
    check_queries(written, OURS)


# -- the seed's own text (conformance tier) --------------------------------------------


def _cut(text: str, start: str, end: str) -> str:
    at = text.index(start)
    return text[at : text.index(end, at) + len(end)]


def seed_queries(text: str) -> dict[str, str]:
    """The seed's queries, as written, with its example values turned into fields."""
    scope = _cut(text, "WITH RECURSIVE scope_chain AS (", "LIMIT 1;")
    direct = _cut(text, "SELECT * FROM openprose.bindings\nWHERE name = 'result'", "LIMIT 1;")
    position = _cut(text, "SELECT statement_index, statement_text, status", "LIMIT 1;")
    branches = _cut(
        text, "SELECT metadata->>'branch' AS branch, status\nFROM", "parent_id IS NOT NULL;"
    )
    run_agent = re.search(
        r"SELECT memory FROM openprose\.agents WHERE name = 'captain' AND run_id = '[^']+'", text
    )
    project_agent = _cut(text, "SELECT memory FROM openprose.agents WHERE name = 'advisor'", ";")
    agents = _cut(text, "SELECT name, scope, memory FROM openprose.agents", ";")
    assert run_agent is not None
    found = {
        "scope": scope.replace("WHERE id = 43", "WHERE id = {start}"),
        "direct": direct.replace("execution_id = 43", "execution_id = {start}").replace(
            "execution_id = 42", "execution_id = {outer}"
        ),
        "position": position,
        "branches": branches.replace("'p1'", "'{parallel}'"),
        "run_agent": run_agent.group(0).replace("'captain'", "'{agent}'"),
        "project_agent": project_agent.replace("'advisor'", "'{agent}'"),
        "agents": agents,
    }
    queries = {
        k: v.replace("'result'", "'{name}'").replace(f"'{SEED_RUN}'", "'{run}'")
        for k, v in found.items()
    }
    # the seed states run status as writes; its read is the run row by id
    queries["status"] = OURS["status"]
    return queries


@pytest.mark.conformance
def test_the_seed_queries_as_written_read_what_the_vm_wrote(seeds: Path, written: Written) -> None:
    text = next(seeds.glob("004_*.txt")).read_text(encoding="utf-8")
    queries = seed_queries(text)
    assert "-- Prefer deeper (more local) scope" in queries["scope"]  # the seed's own text
    check_queries(written, queries)
