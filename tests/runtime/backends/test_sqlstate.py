"""Run state in the seed 004 tables on both SQL stores: the run lifecycle, executions
with parallel and retry metadata, scoped and anonymous bindings, attachments, agents and
segments in every scope, imports, pruning. Seed 004's own queries (scope resolution,
run status, resume position, parallel branch status, agent memory lookup) run unchanged
against what prosec wrote."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from prosec.runtime.backends.sqlstate import ATTACHMENT_LIMIT, SqlState
from prosec.runtime.protocol import AgentScope, BindingKind, ExecutionStatus, RunStatus

from ...conftest import REPO
from ..project import PROSEC, intent
from ..project import Project as Fixture
from .sql_stores import Store, database, postgres_store, sqlite_store

RUN = "20260116-143052-a7b3c9"
EDGES = [("b", "a", "@atomic"), ("c", "a", "@atomic"), ("d", "b", "@atomic"), ("d", "c", "@atomic")]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    runs = tmp_path / "p" / "runs"
    if request.param == "sqlite":
        yield sqlite_store(tmp_path / "p" / "state" / "prosec.db", runs)
        return
    server = request.getfixturevalue("postgres_url")
    with database(server) as url, database(server) as user_url:
        yield postgres_store(url, runs, user_url)


def state_of(store: Store) -> SqlState:
    state = store.open().run_state
    assert state is not None
    return state


def project(tmp_path: Path, nodes: dict[str, dict[str, object]] | None = None) -> Fixture:
    fixture = Fixture.create(tmp_path / "p", intent(nodes or {n: {} for n in "abcd"}, EDGES))
    fixture.world("a", {"v": 1})
    return fixture


def run_cli(fixture: Fixture, store: Store, *args: str) -> dict[str, object]:
    result = fixture.prosec(*args, "--backend", store.kind, "--json", env=store.env)
    assert result.returncode in (0, 1), result.stderr
    summary: dict[str, object] = json.loads(result.stdout)
    return summary


SEED_RUN_STATUS = "SELECT id, status, root_path, root_source FROM openprose.run WHERE id = %s"
SEED_PARALLEL = """
  SELECT metadata->>'branch' AS branch, status FROM openprose.execution
  WHERE run_id = '{run}' AND metadata->>'parallel_id' = '{parallel}'
"""
SEED_PENDING_BRANCHES = """SELECT COUNT(*) AS pending FROM openprose.execution
WHERE run_id = '{run}'
  AND metadata->>'parallel_id' = '{parallel}'
  AND parent_id IS NOT NULL
  AND status NOT IN ('completed', 'failed', 'skipped');"""


def test_a_run_is_registered_tracked_and_ended(store: Store, tmp_path: Path) -> None:
    fixture = project(tmp_path)
    summary = run_cli(fixture, store, "run", ".")
    run_id = str(summary["run_id"])
    ((rid, status, root_path, root_source),) = store.query(SEED_RUN_STATUS, run_id)
    assert (rid, status) == (run_id, "completed")
    assert root_path == str(fixture.root.resolve() / "src/a.prose.md")
    assert root_source == (fixture.root / "src/a.prose.md").read_text()
    executions = state_of(store).executions(run_id)
    assert [(e["statement_text"], e["status"]) for e in executions] == [
        ("a", "completed"),
        ("parallel:", "completed"),
        ("b", "completed"),
        ("c", "completed"),
        ("d", "completed"),
    ] or [(e["statement_text"], e["status"]) for e in executions][2:4] == [
        ("c", "completed"),
        ("b", "completed"),
    ]
    parallel = next(e for e in executions if e["statement_text"] == "parallel:")
    assert parallel["metadata"]["strategy"] == "all"
    assert sorted(parallel["metadata"]["branches"]) == ["b", "c"]
    pid = parallel["metadata"]["parallel_id"]
    branches = store.query(SEED_PARALLEL.format(run=run_id, parallel=pid))
    # the block's own row has the parallel_id too, and no branch
    assert set(branches) == {(None, "completed"), ("b", "completed"), ("c", "completed")}
    assert store.query(SEED_PENDING_BRANCHES.format(run=run_id, parallel=pid)) == [(0,)]
    children = [e for e in executions if e["parent_id"] == parallel["id"]]
    assert sorted(e["statement_text"] or "" for e in children) == ["b", "c"]
    # every node's execution names the receipt it committed
    for e in executions:
        if e["statement_text"] != "parallel:":
            assert str(e["metadata"]["receipt"]).startswith("sha256:")
    # a second run has nothing to do (no receipt, no execution) and still has its row
    again = run_cli(fixture, store, "run", ".")
    assert store.query(SEED_RUN_STATUS, str(again["run_id"]))[0][1] == "completed"
    assert state_of(store).executions(str(again["run_id"])) == []


def test_a_failed_render_fails_the_run_and_the_retry_is_counted(
    store: Store, tmp_path: Path
) -> None:
    fixture = project(tmp_path, {"a": {}, "b": {}, "c": {}, "d": {}})
    fixture.world("b", {"_control": {"error": "upstream-down"}})
    summary = run_cli(fixture, store, "run", ".")
    run_id = str(summary["run_id"])
    assert store.query(SEED_RUN_STATUS, run_id)[0][1] == "failed"
    rows = {e["statement_text"]: e for e in state_of(store).executions(run_id)}
    assert rows["b"]["status"] == "failed"
    assert "upstream-down" in (rows["b"]["error_message"] or "")
    assert rows["parallel:"]["status"] == "failed"
    fixture.world("b", {"v": 2})
    retry = run_cli(fixture, store, "run", ".")
    assert store.query(SEED_RUN_STATUS, str(retry["run_id"]))[0][1] == "completed"
    # a retry inside the same run (a resume) is counted by the run's failed executions
    state = state_of(store)
    index = rows["b"]["statement_index"]
    assert state.failures(run_id, index, "b") == 1


def test_scoped_bindings_resolve_like_the_seed_query(store: Store) -> None:
    state = state_of(store)
    state.start_run(RUN, root_path=None, root_source=None, metadata={})
    outer = state.begin_execution(RUN, 3, "do process(chunk)")
    inner = state.begin_execution(RUN, 7, "do process(part)", parent_id=outer)
    sibling = state.begin_execution(RUN, 7, "do process(other)", parent_id=outer)
    state.put_binding(RUN, "result", BindingKind.LET, "root value")
    state.put_binding(RUN, "result", BindingKind.LET, "outer value", execution_id=outer)
    state.put_binding(RUN, "result", BindingKind.LET, "inner value", execution_id=inner)
    state.put_binding(RUN, "only_root", BindingKind.CONST, "r", source_statement="const x = 1")
    # overwriting a binding in its scope keeps one row (the seed's ON CONFLICT key)
    state.put_binding(RUN, "result", BindingKind.LET, "inner value 2", execution_id=inner)
    assert state.scope_chain(inner) == [inner, outer]

    def seed(name: str, start: int) -> str | None:
        rows = store.query(SEED_SCOPE.format(name=name, run=RUN, start=start))
        return None if not rows else rows[0][4]  # b.value (the seed's b.* order)

    for name, start in [("result", inner), ("result", sibling), ("result", outer)]:
        found = state.resolve(RUN, name, start)
        assert found is not None and found["value"] == seed(name, start)
    assert state.resolve(RUN, "result", inner)["value"] == "inner value 2"  # type: ignore[index]
    assert state.resolve(RUN, "result", sibling)["value"] == "outer value"  # type: ignore[index]
    assert state.resolve(RUN, "result", None)["value"] == "root value"  # type: ignore[index]
    assert state.resolve(RUN, "only_root", inner)["binding"] == "const"  # type: ignore[index]
    assert state.resolve(RUN, "missing", inner) is None and seed("missing", inner) is None
    simple = store.query(SEED_SIMPLE.format(run=RUN, inner=inner, outer=outer))
    assert simple[0][4] == "inner value 2"
    names = [(b["name"], b["execution_id"]) for b in state.bindings(RUN)]
    assert names.count(("result", inner)) == 1


def test_anonymous_bindings_and_attachments(store: Store, tmp_path: Path) -> None:
    state = state_of(store)
    state.start_run(RUN, root_path=None, root_source=None, metadata={})
    first = state.put_anonymous(RUN, "one", source_statement='session "Summarize"')
    second = state.put_anonymous(RUN, "two")
    assert (first["name"], second["name"]) == ("anon_001", "anon_002")
    big = "x" * (ATTACHMENT_LIMIT + 1)
    row = state.put_binding(RUN, "full_report", BindingKind.LET, big)
    assert row["attachment_path"] == "attachments/full_report.md"
    assert (tmp_path / "p/runs" / RUN / "attachments/full_report.md").read_text() == big
    ((value, path),) = store.query(
        "SELECT value, attachment_path FROM openprose.bindings WHERE name = 'full_report'"
    )
    assert path == "attachments/full_report.md" and len(value) < 200
    found = state.resolve(RUN, "full_report", None)
    assert found is not None and state.binding_value(found) == big
    small = state.put_binding(RUN, "small", BindingKind.OUTPUT, "y" * ATTACHMENT_LIMIT)
    assert small["attachment_path"] is None
    third = state.put_anonymous(RUN, "three")
    assert third["name"] == "anon_003"


def test_agents_and_segments_in_every_scope(store: Store) -> None:
    state = state_of(store)
    state.start_run(RUN, root_path=None, root_source=None, metadata={})
    state.put_agent("captain", AgentScope.EXECUTION, "run memory", run_id=RUN)
    state.put_agent("advisor", AgentScope.PROJECT, "project memory")
    state.put_agent("advisor", AgentScope.EXECUTION, "same name, one run", run_id=RUN)
    state.put_agent("mentor", AgentScope.USER, "user memory")
    state.put_agent("captain", AgentScope.EXECUTION, "run memory 2", run_id=RUN)
    # the seed's memory lookups, verbatim
    lookup = "SELECT memory FROM openprose.agents WHERE name = 'captain' AND run_id = '{run}'"
    assert store.query(lookup.format(run=RUN)) == [("run memory 2",)]
    project_lookup = "SELECT memory FROM openprose.agents WHERE name = 'advisor' AND run_id IS NULL"
    assert store.query(project_lookup) == [("project memory",)]
    resume = f"""SELECT name, scope, memory FROM openprose.agents
WHERE run_id = '{RUN}' OR run_id IS NULL;"""
    scopes = {(r[0], r[1]) for r in store.query(resume)}
    assert {("captain", "execution"), ("advisor", "project"), ("advisor", "execution")} <= scopes
    mentor = state.agent("mentor", AgentScope.USER)
    assert mentor is not None and mentor["memory"] == "user memory"
    if store.kind == "postgres":  # in the user database, not the project's
        assert not any(r[0] == "mentor" for r in store.query(resume))
    else:  # the seed's naming convention in the one file
        assert ("__user__mentor", "user") in scopes
    for n in range(3):
        got = state.add_segment(
            "captain", AgentScope.EXECUTION, run_id=RUN, prompt=f"p{n}", summary=f"s{n}"
        )
        assert got == n + 1
    assert state.add_segment("advisor", AgentScope.PROJECT, prompt="q", summary="t") == 1
    assert state.add_segment("mentor", AgentScope.USER, prompt="u", summary="v") == 1
    segments = state.segments("captain", AgentScope.EXECUTION, run_id=RUN)
    assert [(s["segment_number"], s["summary"]) for s in segments] == [
        (1, "s0"),
        (2, "s1"),
        (3, "s2"),
    ]
    assert [s["prompt"] for s in state.segments("mentor", AgentScope.USER)] == ["u"]
    with pytest.raises(Exception, match="only an execution-scoped agent"):
        state.put_agent("x", AgentScope.PROJECT, "m", run_id=RUN)


def test_imports_and_prune(store: Store, tmp_path: Path) -> None:
    state = state_of(store)
    for run_id in ("20260101-000000-aaaaaa", "20260102-000000-bbbbbb", RUN):
        state.start_run(run_id, root_path=None, root_source=None, metadata={})
        state.put_import(
            run_id,
            "research",
            "github.com/openprose/std/research",
            content_hash="sha256:" + "1" * 64,
            requires_schema={"topic": "string"},
            ensures_schema={"findings": "string"},
        )
        state.put_binding(run_id, "x", BindingKind.LET, "v" * (ATTACHMENT_LIMIT + 10))
        state.put_agent("captain", AgentScope.EXECUTION, "m", run_id=run_id)
        state.add_segment("captain", AgentScope.EXECUTION, run_id=run_id, prompt="p", summary="s")
        state.begin_execution(run_id, 0, "a")
    state.end_run("20260101-000000-aaaaaa", RunStatus.COMPLETED)
    state.end_run("20260102-000000-bbbbbb", RunStatus.FAILED)
    (imported,) = state.imports(RUN)
    assert imported["requires_schema"] == {"topic": "string"}
    assert imported["content_hash"] == "sha256:" + "1" * 64
    # an ended run's executing rows were closed with the run
    (closed,) = state.executions("20260102-000000-bbbbbb")
    assert closed["status"] == ExecutionStatus.FAILED and closed["error_message"] == "run failed"
    assert state.prune(keep=1) == ["20260101-000000-aaaaaa"]
    assert state.imports("20260101-000000-aaaaaa") == []
    assert state.bindings("20260101-000000-aaaaaa") == []
    assert not list((tmp_path / "p/runs/20260101-000000-aaaaaa/attachments").iterdir())
    assert state.run("20260101-000000-aaaaaa") is not None  # receipts keep their run
    assert state.prune(keep=1) == []  # a running run is never pruned
    assert len(state.imports(RUN)) == 1


def test_resume_and_interruption_update_the_run(store: Store, tmp_path: Path) -> None:
    fixture = project(tmp_path)
    state = state_of(store)
    state.start_run(RUN, root_path=None, root_source=None, metadata={"kind": "run"})
    cut = state.begin_execution(RUN, 0, "a")
    assert state.interrupt_running() == [RUN]
    assert store.query(SEED_RUN_STATUS, RUN)[0][1] == "interrupted"
    assert state.executions(RUN)[0]["status"] == "failed" and cut
    state.start_run(RUN, root_path=None, root_source=None, metadata={}, resumed=True)
    row = state.run(RUN)
    assert row is not None and row["status"] == "running" and row["metadata"]["resumed"] == 1
    assert row["metadata"]["kind"] == "run"
    shutil.rmtree(fixture.root / "runs", ignore_errors=True)


SEED_SCOPE = """WITH RECURSIVE scope_chain AS (
  -- Start with current execution
  SELECT id, parent_id FROM openprose.execution WHERE id = {start}
  UNION ALL
  -- Walk up to parent
  SELECT e.id, e.parent_id
  FROM openprose.execution e
  JOIN scope_chain s ON e.id = s.parent_id
)
SELECT b.* FROM openprose.bindings b
WHERE b.name = '{name}'
  AND b.run_id = '{run}'
  AND (b.execution_id IN (SELECT id FROM scope_chain) OR b.execution_id IS NULL)
ORDER BY
  CASE WHEN b.execution_id IS NULL THEN 1 ELSE 0 END,  -- Prefer scoped over root
  b.execution_id DESC NULLS LAST  -- Prefer deeper (more local) scope
LIMIT 1;"""
SEED_SIMPLE = """SELECT * FROM openprose.bindings
WHERE name = 'result'
  AND run_id = '{run}'
  AND (execution_id = {inner} OR execution_id = {outer} OR execution_id IS NULL)
ORDER BY execution_id DESC NULLS LAST
LIMIT 1;"""


def test_db_prune_drops_the_data_of_old_runs_and_keeps_the_ledger(
    store: Store, tmp_path: Path
) -> None:
    fixture = project(tmp_path)
    ids = []
    for value in range(3):  # a new contract each time: every node renders again
        fixture.set_intent(intent({n: {"v": value} for n in "abcd"}, EDGES))
        ids.append(str(run_cli(fixture, store, "run", ".")["run_id"]))
    state = state_of(store)
    assert all(state.executions(run_id) for run_id in ids)
    pruned = fixture.prosec(
        "db", "prune", ".", "--backend", store.kind, "--keep", "1", "--json", env=store.env
    )
    assert pruned.returncode == 0, pruned.stderr
    assert json.loads(pruned.stdout)["pruned"] == [ids[1], ids[0]]
    assert state.executions(ids[0]) == [] and state.executions(ids[1]) == []
    assert state.executions(ids[2]) != []
    assert {r[0] for r in store.query("SELECT id FROM openprose.run")} >= set(ids)
    verify = fixture.prosec("receipts", "verify", ".", "--backend", store.kind, env=store.env)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    text = fixture.prosec("db", "prune", ".", "--backend", store.kind, env=store.env)
    assert text.returncode == 0 and "pruned the run data of 0 runs" in text.stdout


def test_a_vm_run_has_its_run_row_and_input_bindings(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(REPO / "corpus" / "tea-timer", root)
    args = ["src/tea-timer.prose.md", "--tea", "green", "--strength", "strong"]
    result = subprocess.run(
        [str(PROSEC), "run", *args, "--backend", store.kind],
        cwd=root,
        env={**os.environ, **store.env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    (run_id,) = [p.name for p in (root / "runs").iterdir()]
    ((rid, status, root_path, root_source),) = store.query(SEED_RUN_STATUS, run_id)
    assert (rid, status) == (run_id, "completed")
    assert root_path == str(root.resolve() / "src/tea-timer.prose.md")
    assert root_source == (root / "src/tea-timer.prose.md").read_text()
    state = state_of(store)
    row = state.run(run_id)
    assert row is not None and row["metadata"] == {"kind": "vm", "entry": "tea-timer"}
    rows = [(b["name"], b["binding"], b["value"]) for b in state.bindings(run_id)]
    inputs = [row for row in rows if row[1] == "input"]
    assert inputs == [("strength", "input", "strong"), ("tea", "input", "green")]
    # it is one call: one row; the entry's declared returns are its `output` bindings,
    # scoped to the run's `output` row
    assert sorted(row[0] for row in rows if row[1] == "output") == ["advice", "minutes"]
    executions = state.executions(run_id)
    assert [(e["statement_text"], e["status"]) for e in executions] == [
        ("call tea-timer", "completed"),
        ("output: minutes, advice", "completed"),
    ]
    scopes = {b["execution_id"] for b in state.bindings(run_id) if b["binding"] == "output"}
    assert scopes == {executions[1]["id"]}


def test_agent_memory_and_segments_are_projected_into_the_agents_tables(
    store: Store, tmp_path: Path
) -> None:
    """lighthouse-watch's agent (persist: project) keeps its files in state/agents/; on
    a SQL store each session is also its `agents` row and `agent_segments` row."""
    from ..test_e2e_memory import AGENT_TOML, FAKE_AGENT
    from ..test_e2e_memory import prosec as run_prosec

    root = tmp_path / "p"
    shutil.copytree(REPO / "corpus" / "lighthouse-watch", root)
    shutil.copy(FAKE_AGENT, root / "fake_agent.py")
    (root / "prose.toml").write_text(
        '[render.lamp-reports]\nkind = "ingress"\n\n' + AGENT_TOML.format(node="lighthouse-keeper")
    )
    env = {**store.env, "PROSEC_CACHE_DIR": str(tmp_path / "cache")}
    env["OPENPROSE_USER_ROOT"] = str(tmp_path / "u")
    for command in (("build",), ("activate",)):
        assert run_prosec(root, *command, env=env).returncode == 0
    for n in (1, 2):
        data = json.dumps({"reports": [{"light": f"l{i}", "status": "dark"} for i in range(n)]})
        args = ("trigger", "lamp-reports", "--data", data, "--backend", store.kind)
        result = run_prosec(root, *args, env=env)
        assert result.returncode == 0, result.stderr
    lookup = (
        "SELECT memory FROM openprose.agents WHERE name = 'lighthouse-keeper' AND run_id IS NULL"
    )
    ((memory,),) = store.query(lookup)
    assert memory == (root / "state/agents/lighthouse-keeper/memory.md").read_text()
    assert "sessions: 2" in memory
    segments = state_of(store).segments("lighthouse-keeper", AgentScope.PROJECT)
    assert [s["segment_number"] for s in segments] == [1, 2]
    assert (
        segments[1]["summary"]
        == (root / "state/agents/lighthouse-keeper/lighthouse-keeper-002.md").read_text()
    )


@pytest.mark.parametrize("point", ["after-render", "after-pending"])
def test_a_run_killed_mid_render_resumes_with_the_retry_counted(
    store: Store, tmp_path: Path, point: str
) -> None:
    """SIGKILL after b's render (before its commit) and after its write-ahead record: the
    resumed run is completed, b has exactly one completed execution, and the cut one is
    failed (no receipt: the render is redone, `retry_attempt` 2) or completed from the
    receipt the roll-forward committed (nothing redone, no retry)."""
    fixture = project(tmp_path)
    killed = fixture.prosec(
        "run", ".", "--backend", store.kind, env={**store.env, "PROSEC_CRASH_AT": f"{point}:b"}
    )
    assert killed.returncode == -9, killed.stderr
    (run_id,) = [p.name for p in (fixture.root / "runs").iterdir() if not p.name.startswith(".")]
    assert store.query(SEED_RUN_STATUS, run_id)[0][1] == "running"
    # the seed's resume query finds where it stopped
    position = store.query(
        "SELECT statement_index, statement_text, status FROM openprose.execution "
        f"WHERE run_id = '{run_id}' AND status = 'executing' ORDER BY id DESC LIMIT 1;"
    )
    assert position and position[0][2] == "executing"
    resumed = fixture.prosec("resume", run_id, "--backend", store.kind, env=store.env)
    assert resumed.returncode == 0, resumed.stderr
    row = state_of(store).run(run_id)
    assert row is not None and row["status"] == "completed" and row["metadata"]["resumed"] == 1
    rows = [e for e in state_of(store).executions(run_id) if e["statement_text"] == "b"]
    done = [e for e in rows if e["status"] == "completed"]
    assert len(done) == 1
    if point == "after-render":
        assert [e["status"] for e in rows] == ["failed", "completed"]
        assert rows[0]["error_message"] == "run interrupted"
        assert done[0]["metadata"]["retry_attempt"] == 2
    else:
        assert len(rows) == 1 and "retry_attempt" not in done[0]["metadata"]
    names = sorted(e["statement_text"] or "" for e in state_of(store).executions(run_id))
    assert [n for n in names if n != "parallel:"].count("d") == 1


@pytest.mark.postgres
def test_a_large_version_is_a_run_attachment_on_postgresql(
    postgres_url: str, tmp_path: Path
) -> None:
    """Seed 004: a canonical artifact over 100 KiB is a file in the committing run's
    attachments/ (its row names it, `artifact` is NULL); it is read back, verified, and
    a changed byte in it is found by `prosec receipts verify`."""
    fixture = project(tmp_path)
    fixture.world("a", {"blob": "x" * (ATTACHMENT_LIMIT + 5000)})
    with database(postgres_url) as url:
        store = postgres_store(url, tmp_path / "p/runs")
        first = run_cli(fixture, store, "run", ".")
        assert first["failed"] == [] and "d" in list(first["rendered"])  # type: ignore[arg-type]
        rows = store.query(
            "SELECT node, artifact IS NULL, attachment_path FROM openprose.world_model_version"
        )
        # every node publishes a's blob (the render copies its inputs): all are large (b
        # and c publish the same bytes, one content-addressed version)
        assert {"a", "d"} <= {r[0] for r in rows} and all(r[1] for r in rows)
        attachments = fixture.root / "runs" / str(first["run_id"]) / "attachments"
        assert {(fixture.root / str(r[2])).parent for r in rows} == {attachments}
        path = fixture.root / str(next(r[2] for r in rows if r[0] == "a"))
        verify = fixture.prosec("receipts", "verify", ".", "--backend", "postgres", env=store.env)
        assert verify.returncode == 0, verify.stdout + verify.stderr
        # a subscriber rendering in a later run reads the attachment back (and checks it)
        fixture.set_intent(intent({"a": {}, "b": {"v": 2}, "c": {}, "d": {}}, EDGES))
        again = run_cli(fixture, store, "run", ".")
        assert again["failed"] == [] and again["waves"] == 1, again  # b rendered, unmoved
        path.write_bytes(path.read_bytes().replace(b"xxxx", b"xxxy", 1))
        tampered = fixture.prosec(
            "receipts", "verify", ".", "--backend", "postgres", "--json", env=store.env
        )
        assert tampered.returncode == 1, tampered.stdout + tampered.stderr
        assert url not in tampered.stdout + tampered.stderr
