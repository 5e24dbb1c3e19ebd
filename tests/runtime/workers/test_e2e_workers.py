"""`prosec run --workers N`, `trigger --workers N` and `prosec worker`, end to end on the
real PostgreSQL through the real `prosec` command: the same receipts as one runner, a
worker on "another machine" (another folder, no shared run folder), exactly one commit
when two workers render one node, a failed render, `prosec status`, and the messages
when workers cannot run."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from prosec.runtime.backends.postgres import PostgresBackend
from prosec.runtime.backends.sqlstate import ATTACHMENT_LIMIT

from ..project import PROSEC, Project, intent

pytestmark = pytest.mark.postgres

NODES = {n: {} for n in "abcdef"}
EDGES = [
    ("b", "a", "@atomic"),
    ("c", "a", "@atomic"),
    ("d", "b", "@atomic"),
    ("d", "c", "@atomic"),
    ("e", "c", "@atomic"),
    ("f", "d", "@atomic"),
    ("f", "e", "@atomic"),
]
PG = ("--backend", "postgres")


def ledger(env: dict[str, str], node: str) -> list[dict[str, Any]]:
    backend = PostgresBackend(
        env["OPENPROSE_POSTGRES_URL"], schema=env["OPENPROSE_POSTGRES_SCHEMA"]
    )
    try:
        return [dict(r) for r in backend.ledger(node)]
    finally:
        backend.close()


def test_workers_write_the_receipts_one_runner_writes(
    tmp_path: Path, pg_env: dict[str, str]
) -> None:
    fixture = Project.create(tmp_path / "p", intent(NODES, EDGES))
    fixture.world("a", {"v": 1})
    first = fixture.run(*PG, "--workers", "2", "--lease", "2", env=pg_env)
    assert first["failed"] == [] and sorted(first["rendered"]) == list("abcdef"), first
    assert first["waves"] == 4
    reference = Project.create(tmp_path / "ref", intent(NODES, EDGES))
    reference.world("a", {"v": 1})
    assert reference.run()["failed"] == []
    for node in "abcdef":
        assert ledger(pg_env, node) == reference.ledger(node), node
    verify = fixture.prosec("receipts", "verify", ".", *PG, env=pg_env)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    # the run folder holds what the workers published, read back out of the database
    run = fixture.run_dir(first["run_id"])
    assert json.loads((run / "world-model/f/truth.json").read_text()) == json.loads(
        (reference.root / "state/world-model/f/published/truth.json").read_text()
    )
    log = fixture.log(first["run_id"])
    assert any(line.endswith("→ f ✓ rendered") for line in log), log
    # every render ran on a worker, once; an unchanged re-run enqueues nothing
    assert sum(fixture.renders().values()) == 6
    again = fixture.run(*PG, "--workers", "2", "--lease", "2", env=pg_env)
    assert again["rendered"] == [] and again["failed"] == []
    # a tick's waves through workers too
    fixture.world("a", {"v": 2})
    fixture.reset_renders()
    tick = fixture.prosec(
        "tick", "a", ".", "--json", *PG, "--workers", "1", "--lease", "2", env=pg_env
    )
    assert tick.returncode == 0, tick.stderr
    assert sorted(json.loads(tick.stdout)["rendered"]) == list("abcdef")
    status = fixture.prosec("status", ".", "--json", *PG, env=pg_env)
    queue = json.loads(status.stdout)["queue"]
    assert queue["jobs"] == {"queued": 0, "running": 0, "failed": 0}
    assert queue["workers"] == []  # the local workers stopped with their runner


def test_a_worker_on_another_machine_reads_and_publishes_through_the_database(
    tmp_path: Path, pg_env: dict[str, str]
) -> None:
    """The runner starts no worker (--workers 0): its jobs wait, `prosec status` shows
    them queued; a worker in another folder (its own checkout of the project, no access
    to the runner's runs/) renders them, large artifacts included (attachments in the
    database)."""
    fixture = Project.create(tmp_path / "here", intent(NODES, EDGES))
    elsewhere = tmp_path / "there"
    shutil.copytree(fixture.root, elsewhere)
    fixture.world("a", {"blob": "x" * (ATTACHMENT_LIMIT + 1000)})
    shutil.copy(fixture.root / "world/a.json", elsewhere / "world/a.json")
    env = {**os.environ, **pg_env}
    runner = subprocess.Popen(
        [str(PROSEC), "run", ".", "--json", *PG, "--workers", "0", "--lease", "2"],
        cwd=fixture.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    worker = None
    try:
        deadline = time.monotonic() + 60
        queue: dict[str, Any] = {}
        while time.monotonic() < deadline:
            status = fixture.prosec("status", ".", "--json", *PG, env=pg_env)
            queue = json.loads(status.stdout).get("queue") or {}
            if queue.get("jobs", {}).get("queued"):
                break
            time.sleep(0.2)
        assert queue["jobs"]["queued"] == 1 and queue["job_list"][0]["node"] == "a", queue
        worker = subprocess.Popen(
            [str(PROSEC), "worker", ".", "--concurrency", "2", "--lease", "2"],
            cwd=elsewhere,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        out, err = runner.communicate(timeout=120)
        assert runner.returncode == 0, err
        summary = json.loads(out)
        assert sorted(summary["rendered"]) == list("abcdef")
        status = json.loads(fixture.prosec("status", ".", "--json", *PG, env=pg_env).stdout)
        assert len(status["queue"]["workers"]) == 1
    finally:
        if runner.poll() is None:
            runner.kill()
        if worker is not None:
            worker.terminate()
            _, werr = worker.communicate(timeout=60)
    # the renders ran over there, and nothing of the runner's run folder was used there
    assert sum(Project(elsewhere).renders().values()) == 6 and not fixture.renders()
    assert not (elsewhere / "runs" / summary["run_id"]).exists()
    assert "committed rendered" in werr and pg_env["OPENPROSE_POSTGRES_URL"] not in werr
    run = fixture.run_dir(summary["run_id"])
    truth = json.loads((run / "world-model/f/truth.json").read_text())
    assert truth["inputs"]["d"]["inputs"]["b"]["inputs"]["a"]["own"]["blob"].startswith("xxx")
    with psycopg.connect(pg_env["OPENPROSE_POSTGRES_URL"], autocommit=True) as db:
        schema = pg_env["OPENPROSE_POSTGRES_SCHEMA"]
        rows = db.execute(f"SELECT count(*) FROM {schema}.x_attachment".encode()).fetchone()
    assert rows is not None and rows[0] >= 1
    verify = fixture.prosec("receipts", "verify", ".", *PG, env=pg_env)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_two_workers_rendering_one_node_commit_once(tmp_path: Path, pg_env: dict[str, str]) -> None:
    """Two workers take the same job (as after a lease expired on a worker that was only
    slow): both render, one commits, the other's work is discarded and logged."""
    from prosec.runtime.workers.jobs import RenderJob, intent_token

    fixture = Project.create(tmp_path / "p", intent({"a": {}}, []))
    fixture.world("a", {"v": 1, "_control": {"sleep": 0.3}})
    first = fixture.prosec("run", ".", *PG, env=pg_env)  # creates the schema and a run
    assert first.returncode == 0, first.stderr
    run_id = first.stdout.split()[1].rstrip(":")
    head = ledger(pg_env, "a")[-1]
    job = RenderJob(
        run_id=run_id,
        node="a",
        prev=head["content_hash"],
        contract=head["contract_fingerprint"],
        inputs=tuple(head["input_fingerprints"]),
        wake_source="self",
        wake_refs=(),
        pinned=(("a", fixture_version(pg_env)),),
        label="9",
        intent=intent_token(json.loads((fixture.root / "dist/manifest.active.json").read_text())),
        timeout=60,
        default_model="unspecified",
    )
    fixture.world("a", {"v": 2, "_control": {"sleep": 0.3}})
    script = (
        "import json, os, sys, threading\n"
        "from pathlib import Path\n"
        "from prosec.runtime.session import open_project\n"
        "from prosec.runtime.workers.worker import WorkerSide\n"
        "job = json.loads(sys.argv[1])\n"
        "results = []\n"
        "def one():\n"
        "    project = open_project(Path('.'), backend='postgres', env=dict(os.environ))\n"
        "    project.bind_renders({})\n"
        "    side = WorkerSide(project, dict(os.environ), attempts=3)\n"
        "    results.append(side.render(job, 0))\n"
        "threads = [threading.Thread(target=one) for _ in range(2)]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "print(json.dumps(sorted(results)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(job.payload())],
        cwd=fixture.root,
        env={**os.environ, **pg_env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["discarded", "rendered"], done.stdout + done.stderr
    assert "another worker committed this render first" in done.stderr
    assert fixture.renders()["a"] == 3  # the first run's render, then both workers'
    assert len(ledger(pg_env, "a")) == 2


def fixture_version(env: dict[str, str]) -> str:
    backend = PostgresBackend(
        env["OPENPROSE_POSTGRES_URL"], schema=env["OPENPROSE_POSTGRES_SCHEMA"]
    )
    try:
        version = backend.published_version("a")
        assert version is not None
        return version
    finally:
        backend.close()


def test_a_failing_render_on_a_worker_is_a_failed_receipt(
    tmp_path: Path, pg_env: dict[str, str]
) -> None:
    fixture = Project.create(tmp_path / "p", intent(NODES, EDGES))
    fixture.world("c", {"_control": {"fail": 3}})
    result = fixture.run(*PG, "--workers", "2", "--lease", "2", env=pg_env)
    assert [f["node"] for f in result["failed"]] == ["c"]
    reference = Project.create(tmp_path / "ref", intent(NODES, EDGES))
    reference.world("c", {"_control": {"fail": 3}})
    expected = reference.run()
    # the reason names the runner's run folder, as a local render's does
    ours, theirs = result["run_id"], expected["run_id"]
    assert f"see runs/{ours}/workspace/c/__render.log" in result["failed"][0]["reason"]
    assert json.dumps(result["failed"]).replace(ours, theirs) == json.dumps(expected["failed"])
    assert sorted(result["rendered"]) == sorted(expected["rendered"])
    assert ledger(pg_env, "c")[-1]["status"] == "failed"
    for node in NODES:  # (c's hash covers the run id in its reason)
        unsigned = [
            {k: v for k, v in r.items() if k not in ("content_hash", "sig")}
            for r in ledger(pg_env, node)
        ]
        expected_unsigned = [
            {k: v for k, v in r.items() if k not in ("content_hash", "sig")}
            for r in reference.ledger(node)
        ]
        mine = json.dumps(unsigned, sort_keys=True).replace(ours, theirs)
        assert mine == json.dumps(expected_unsigned, sort_keys=True), node
    verify = fixture.prosec("receipts", "verify", ".", *PG, env=pg_env)
    assert verify.returncode == 0, verify.stdout + verify.stderr


CONTRACT_RENDER = (
    "import json, os, pathlib\n"
    "contract = os.environ['PROSEC_CONTRACT']\n"
    "text = pathlib.Path(contract).read_text() if contract else None\n"
    "out = pathlib.Path(os.environ['PROSEC_OUTPUT'], 'truth.json')\n"
    "out.write_text(json.dumps({'contract': text}))\n"
)


def test_a_worker_render_reads_its_contract_as_a_local_one_does(
    tmp_path: Path, pg_env: dict[str, str]
) -> None:
    """A worker's scratch run holds the sources its renders read, placed per render:
    each render's PROSEC_CONTRACT is its own node's source, as in a local run."""
    toml = f'[render.default]\nkind = "command"\ncommand = ["{sys.executable}", "r.py"]\n'
    truths = []
    for name, args, env in (("w", (*PG, "--workers", "2"), pg_env), ("local", (), None)):
        fixture = Project.create(tmp_path / name, intent(NODES, EDGES), toml)
        (fixture.root / "r.py").write_text(CONTRACT_RENDER)
        result = fixture.run(*args, env=env)
        assert sorted(result["rendered"]) == sorted(NODES), result
        run = fixture.root / "runs" / result["run_id"] / "world-model"
        truths.append({n: json.loads((run / n / "truth.json").read_text()) for n in NODES})
    assert truths[0] == truths[1]
    assert truths[0]["d"] == {"contract": "---\nname: d\n---\n"}


def test_an_agent_rendered_on_a_worker_has_its_memory_rows(
    tmp_path: Path, pg_env: dict[str, str]
) -> None:
    """The worker that rendered an agent with `persist: project` records its `agents` row
    (its memory.md) and the session's `agent_segments` row, as a runner does for a
    local render."""
    from ..test_e2e_memory import AGENT_TOML, FAKE_AGENT

    doc = intent({"keeper": {}}, [])
    doc["topology"]["nodes"][0]["runtime"] = {"persist": "project"}
    fixture = Project.create(tmp_path / "p", doc, AGENT_TOML.format(node="keeper"))
    shutil.copy(FAKE_AGENT, fixture.root / "fake_agent.py")
    result = fixture.run(*PG, "--workers", "1", env=pg_env)
    assert result["rendered"] == ["keeper"], result
    memory = (fixture.root / "state/agents/keeper/memory.md").read_text()
    schema = pg_env["OPENPROSE_POSTGRES_SCHEMA"]
    with psycopg.connect(pg_env["OPENPROSE_POSTGRES_URL"], autocommit=True) as db:
        agents = db.execute(f"SELECT name, scope, memory FROM {schema}.agents".encode())
        segments = db.execute(
            f"SELECT agent_name, segment_number FROM {schema}.agent_segments".encode()
        ).fetchall()
        assert agents.fetchall() == [("keeper", "project", memory)]
    assert segments == [("keeper", 1)]


def test_a_killed_runner_releases_its_lock_though_its_forked_workers_live_on(
    tmp_path: Path, pg_env: dict[str, str]
) -> None:
    """Forked local workers close the runner's database connection they inherit: a
    runner SIGKILLed mid-run ends its session, and with it the runner lock, while its
    workers (sessions of their own) live on until stopped."""
    from .test_worker_faults import children

    fixture = Project.create(tmp_path / "p", intent(NODES, EDGES))
    for node in NODES:
        fixture.world(node, {"_control": {"sleep": 1.0}})
    runner = subprocess.Popen(
        [str(PROSEC), "run", ".", *PG, "--workers", "2", "--lease", "2"],
        cwd=fixture.root,
        env={**os.environ, **pg_env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while True:  # the runner holds the lock once a's receipt is in
            assert runner.poll() is None and time.monotonic() < deadline, "no receipt"
            try:
                if ledger(pg_env, "a"):
                    break
            except Exception:  # the schema is not made yet
                pass
            time.sleep(0.05)
        workers = children(runner.pid)
        assert len(workers) == 2
        runner.kill()
        runner.wait()
        key = f"prosec:{pg_env['OPENPROSE_POSTGRES_SCHEMA']}"
        with psycopg.connect(pg_env["OPENPROSE_POSTGRES_URL"], autocommit=True) as db:
            deadline = time.monotonic() + 10
            while True:
                row = db.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (key,)).fetchone()
                if row is not None and row[0]:
                    break
                assert time.monotonic() < deadline, "the killed runner's lock is still held"
                time.sleep(0.1)
        assert all(Path(f"/proc/{pid}").exists() for pid in workers)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)


def test_workers_need_postgres_and_say_so(tmp_path: Path) -> None:
    fixture = Project.create(tmp_path / "p", intent(NODES, EDGES))
    result = fixture.prosec("run", ".", "--workers", "2")
    assert result.returncode == 2
    assert "workers share the PostgreSQL backend's database" in result.stderr
    assert "filesystem" in result.stderr


def test_without_the_extra_workers_say_what_to_install(
    tmp_path: Path, pg_env: dict[str, str]
) -> None:
    """procrastinate missing (hidden behind a module that fails to import): the message
    names the exact install command, for `run --workers` and for `prosec worker`."""
    fixture = Project.create(tmp_path / "p", intent(NODES, EDGES))
    hide = tmp_path / "hide"
    (hide / "procrastinate").mkdir(parents=True)
    (hide / "procrastinate/__init__.py").write_text("raise ImportError('hidden for the test')\n")
    env = {**pg_env, "PYTHONPATH": str(hide)}
    for args in (("run", ".", *PG, "--workers", "1"), ("worker", ".")):
        result = fixture.prosec(*args, env=env)
        assert result.returncode == 2, result.stderr
        assert "pip install 'prosec[workers]'" in result.stderr, result.stderr


def test_runner_and_workers_opening_a_fresh_schema_at_once_install_the_queue_once(
    pg_env: dict[str, str],
) -> None:
    """A runner and its local workers start together: each installs procrastinate's
    schema if it is missing, and none may fail because another just did."""
    import threading

    from prosec.runtime.workers.queue import install

    url, schema = pg_env["OPENPROSE_POSTGRES_URL"], pg_env["OPENPROSE_POSTGRES_SCHEMA"]
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {schema}".encode())
    errors: list[str] = []

    def one() -> None:
        try:
            with psycopg.connect(url, autocommit=True, options=f"-c search_path={schema}") as db:
                install(db, schema)
        except psycopg.Error as exc:
            errors.append(repr(exc))

    threads = [threading.Thread(target=one) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_render_flags_are_refused_with_workers(tmp_path: Path, pg_env: dict[str, str]) -> None:
    """Workers bind their renders from prose.toml: a --render of the runner would not
    reach them, so it is refused rather than silently ignored."""
    fixture = Project.create(tmp_path / "p", intent(NODES, EDGES))
    result = fixture.prosec(
        "run", ".", *PG, "--workers", "1", "--render", "a=command:true", env=pg_env
    )
    assert result.returncode == 2, result.stderr
    assert "workers bind theirs from prose.toml" in result.stderr
