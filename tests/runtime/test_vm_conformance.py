"""The VM's run state on every backend: each corpus VM program writes the same logical
seed 004 rows (executions with their parents, statuses, errors, loop and parallel
metadata; bindings by name and scope; agents and segments of every scope; imports) on
the filesystem (vm/state.jsonl), SQLite, PostgreSQL and in-context (its in-memory
database). The durable ones run the real `prosec run`; a run cut by SIGKILL after a
journal line and `prosec resume`d ends with the same rows, none duplicated."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prosec.runtime.backends import Backend
from prosec.runtime.backends.filesystem import FilesystemBackend
from prosec.runtime.backends.incontext import InContextBackend
from prosec.runtime.backends.postgres import PostgresBackend
from prosec.runtime.backends.sqlite import SqliteBackend
from prosec.runtime.vm.rows import read_rows

from .backends.sql_stores import database
from .vm.support import VmProject

CASES: dict[str, tuple[str, dict[str, Any], list[str]]] = {
    "vm-bindings": ("packing-list", {}, ["--place", "the Beacons", "--nights", "2"]),
    "vm-parallel": ("market-stalls", {}, ["--basket", "figs"]),
    "vm-loops": (
        "bread-proofing",
        {"answers": {"the dough has doubled": [False, True]}},
        ["--loaves", '["rye", "spelt"]'],
    ),
    "vm-branches": (
        "plant-care",
        {
            "answers": {
                "the leaves are pale": True,
                "how the owner likes to hear about it": "detailed",
            }
        },
        ["--plant", "fern"],
    ),
    "vm-errors": ("parcel-delivery", {"fail": ["courier-booking"]}, ["--parcel", "books"]),
    "vm-sessions": ("book-club", {}, ["--book", "Emma", "--questions", "why Knightley"]),
    "vm-blocks": ("pottery-firing", {}, ["--pots", '["jug", "bowl"]']),
    "vm-imports": ("tea-party", {}, ["--guests", "4"]),
    "vm-agents": ("seed-swap", {}, ["--member", "Ada", "--packets", '["runner beans"]']),
}
BACKENDS = [
    "filesystem",
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.postgres),
    "in-context",
]


class Store:
    """One backend for one project: how `prosec` reaches it and how to read it back."""

    def __init__(self, kind: str, project: VmProject, url: str | None = None) -> None:
        self.kind = kind
        self.project = project
        self.url = url
        self.env = {"OPENPROSE_USER_ROOT": str(project.root.parent / "user")}
        if url is not None:
            self.env["OPENPROSE_POSTGRES_URL"] = url
        self.memory = InContextBackend() if kind == "in-context" else None

    def open(self) -> Backend:
        root = self.project.root
        if self.kind == "filesystem":
            return FilesystemBackend(root / "state")
        if self.kind == "sqlite":
            return SqliteBackend(root / "state" / "prosec.db", runs=root / "runs")
        if self.kind == "postgres":
            assert self.url is not None
            return PostgresBackend(self.url, runs=root / "runs")
        assert self.memory is not None
        return self.memory

    def run(self, args: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
        if self.kind != "in-context":
            return self.project.run("--backend", self.kind, *args, env=self.env)
        return in_process(self.project, self.open(), args, monkeypatch, self.env)

    def rows(self, outcome: dict[str, Any]) -> dict[str, Any]:
        backend = self.open()
        try:
            return read_rows(backend, Path(outcome["path"]), outcome["run_id"])
        finally:
            if self.kind != "in-context":
                backend.close()


def in_process(
    project: VmProject,
    backend: Backend,
    args: list[str],
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
) -> dict[str, Any]:
    """`prosec run FILE --backend in-context`, in this process (its database is the
    backend's memory, which a subprocess would take with it)."""
    from prosec.compiler.codegen.vm import vm_section
    from prosec.compiler.commands.run_file import _compile
    from prosec.runtime.config import load_config
    from prosec.runtime.vm import VmSettings, start_vm

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(project.root)
    root, target, result, contract = _compile(project.root / project.entry)
    raw = dict(result.intent)
    raw["vm"] = vm_section(result.unit.project, target, contract.name)
    given = {args[i].removeprefix("--"): args[i + 1] for i in range(0, len(args), 2)}
    settings = VmSettings(root=root, config=load_config(root), backend=backend)
    outcome = start_vm(settings, raw, given)
    return {"run_id": outcome.run.run_id, "path": str(outcome.run.path), "ok": outcome.ok}


@pytest.fixture
def store_for(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    kind = request.param
    urls: list[str] = []
    stack: list[Any] = []

    def make(program: str, entry: str, table: dict[str, Any]) -> Store:
        project = VmProject.create(tmp_path / kind, program, entry, table)
        url = None
        if kind == "postgres":
            server = request.getfixturevalue("postgres_url")
            context = database(server)
            url = context.__enter__()
            stack.append(context)
            urls.append(url)
        return Store(kind, project, url)

    yield make
    for context in reversed(stack):
        context.__exit__(None, None, None)


def logical(rows: dict[str, Any], run_id: str, *, attempts: bool = False) -> dict[str, Any]:
    """The rows as the same values on every store: rows by step key (ids differ between
    stores), scopes and parents as keys, the run id as RUN; `retry_attempt` (a resume's
    count) only when `attempts`."""
    keys = {e["id"]: e["metadata"]["key"] for e in rows["executions"]}
    assert len(set(keys.values())) == len(rows["executions"]), "a step has two rows"

    def plain(value: Any) -> Any:
        text = json.dumps(value, sort_keys=True).replace(run_id, "RUN")
        return json.loads(text)

    def meta(m: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in m.items() if attempts or k != "retry_attempt"}

    executions = {
        e["metadata"]["key"]: plain(
            {
                "parent": keys.get(e["parent_id"]),
                "index": e["statement_index"],
                "text": e["statement_text"],
                "status": e["status"],
                "error": e["error_message"],
                "metadata": meta(e["metadata"]),
            }
        )
        for e in rows["executions"]
    }
    bindings = sorted(
        (
            plain(
                [
                    b["name"],
                    keys.get(b["execution_id"]),
                    b["binding"],
                    b["value"],
                    b["source_statement"],
                ]
            )
            for b in rows["bindings"]
        ),
        key=json.dumps,
    )
    return {
        "run": plain(rows["run"]),
        "executions": executions,
        "bindings": bindings,
        "agents": plain([[a["name"], a["scope"], a["memory"]] for a in rows["agents"]]),
        "segments": plain(
            [
                [s["agent_name"], s["scope"], s["segment_number"], s["prompt"], s["summary"]]
                for s in rows["segments"]
            ]
        ),
        "imports": plain(
            [
                [i["alias"], i["source_ref"], i["content_hash"], i["requires"], i["ensures"]]
                for i in rows["imports"]
            ]
        ),
    }


_REFERENCES: dict[str, dict[str, Any]] = {}


def reference(tmp_path: Path, program: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The program's rows from an in-context run in this process (the yardstick; one
    run per program and test process)."""
    if program not in _REFERENCES:
        _REFERENCES[program] = _reference(tmp_path, program, monkeypatch)
    return json.loads(json.dumps(_REFERENCES[program]))


def _reference(tmp_path: Path, program: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    entry, table, args = CASES[program]
    store = Store("in-context", VmProject.create(tmp_path / "reference", program, entry, table))
    outcome = store.run(args, monkeypatch)
    assert outcome["ok"], outcome
    return logical(store.rows(outcome), outcome["run_id"])


def check(program: str, rows: dict[str, Any]) -> None:
    """What each program's rows must say, whatever the store."""
    executions, bindings = rows["executions"], rows["bindings"]
    assert rows["run"]["status"] == "completed"
    assert rows["run"]["metadata"]["kind"] == "vm"
    scoped = {(name, scope): (kind, value) for name, scope, kind, value, _ in bindings}
    if program != "vm-errors":
        assert {e["status"] for e in executions.values()} == {"completed"}, executions
    for key, row in executions.items():  # every parent is the row of a prefix of the key
        assert row["parent"] is None or key.startswith(row["parent"]), (key, row)
        assert row["metadata"]["key"] == key and row["text"], (key, row)
    if program == "vm-parallel":
        branches = [e for e in executions.values() if e["parent"] == "main/0"]
        assert sorted(e["metadata"]["branch"] for e in branches) == ["bread", "cheese", "fruit"]
        assert executions["main/0"]["metadata"]["branches"] == ["fruit", "bread", "cheese"]
        assert all(e["metadata"]["parallel_id"] == "main/0" for e in branches)
        assert {("fruit", None), ("bread", None), ("cheese", None)} <= set(scoped)
    if program == "vm-loops":
        assert executions["main/3"]["metadata"]["condition"] == "the dough has doubled"
        assert executions["main/3"]["metadata"]["current_iteration"] == 2
        assert executions["main/1"]["metadata"]["max_iterations"] == 2
        iterations = [k for k, e in executions.items() if e["metadata"]["kind"] == "iteration"]
        assert len(iterations) == 6 and executions["main/2@1"]["parent"] == "main/2"
        assert scoped[("loaf", "main/2@1")] == ("let", "spelt")  # the iteration's own scope
        assert ("log", None) in scoped  # appended to in the root scope
    if program == "vm-errors":
        failed = executions["main/1.try/0"]
        assert failed["status"] == "failed" and failed["error"].startswith("refused: ")
        assert executions["main/1"]["status"] == "completed"
        assert executions["main/1"]["metadata"]["caught"] == failed["error"]
        # the try, catch and finally bodies are rows of their own, frames of their bindings
        parts = {part: executions[f"main/1.{part}"] for part in ("try", "catch", "finally")}
        assert [(p["parent"], p["metadata"]["kind"], p["status"]) for p in parts.values()] == [
            ("main/1", "try", "failed"),
            ("main/1", "catch", "completed"),
            ("main/1", "finally", "completed"),
        ]
        assert parts["catch"]["text"] == "catch as refusal:" and failed["parent"] == "main/1.try"
        assert scoped[("refusal", "main/1.catch")][0] == "let"
        assert scoped[("anon_001", "main/1.finally")][1].startswith("notify-sender:")
        # the returned `receipt` (output, in the output row) beside the root `let receipt`
        assert executions["output"]["parent"] is None
        assert scoped[("receipt", "output")][0] == "output"
        assert scoped[("receipt", None)] == ("let", scoped[("receipt", "output")][1])
    if program == "vm-branches":
        assert executions["main/1"]["metadata"]["branch"] == 1
        assert executions["main/3"]["metadata"]["option"] == "detailed"
        assert executions["main/1.1/0"]["parent"] == "main/1.1"  # the elif body's row
        assert executions["main/1.1"]["parent"] == "main/1"
        assert executions["main/1.1"]["text"] == "elif **the leaves are pale**:"
        assert executions["main/3.1"]["metadata"]["kind"] == "branch"
    if program == "vm-blocks":
        assert executions["main/1#glaze"]["metadata"]["kind"] == "block"
        assert scoped[("pot", "main/1#glaze")] == ("input", "jug")
        assert scoped[("pot", "main/2#glaze")] == ("input", "bowl")
    if program == "vm-imports":
        assert executions["main/1>main"]["metadata"]["kind"] == "program"
        assert scoped[("tea", "main/1>main")] == ("input", "assam")
        aliases = [(alias, source) for alias, source, digest, *_ in rows["imports"] if digest]
        assert aliases == [("brew", "cup-of-tea"), ("brew.boil", "kettle")]
    if program in ("vm-sessions", "vm-agents"):
        assert any(name.startswith("anon_") for name, *_ in bindings)
    if program == "vm-agents":
        scopes = {(name, scope) for name, scope, _ in rows["agents"]}
        assert scopes == {
            ("archivist", "project"),
            ("almanac", "user"),
            ("steward", "execution"),
            ("ledger", "custom"),  # persist: "society/ledger", a folder of the project
        }
        numbers = [(s[0], s[2]) for s in rows["segments"]]
        assert numbers == [
            ("almanac", 1),
            ("archivist", 1),
            ("archivist", 2),
            ("ledger", 1),
            ("steward", 1),
            ("steward", 2),
        ]
        assert all("run: RUN" in s[4] for s in rows["segments"])


@pytest.mark.parametrize("store_for", BACKENDS, indirect=True)
@pytest.mark.parametrize("program", sorted(CASES))
def test_every_backend_records_the_same_rows(
    program: str, store_for: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry, table, args = CASES[program]
    expected = reference(tmp_path, program, monkeypatch)
    check(program, expected)
    store: Store = store_for(program, entry, table)
    outcome = store.run(args, monkeypatch)
    assert outcome["ok"], outcome
    assert logical(store.rows(outcome), outcome["run_id"]) == expected


CUTS = {
    "vm-loops": [3, 9],
    "vm-parallel": [2],
    "vm-imports": [3],
    "vm-agents": [3, 5],
    "vm-bindings": [3],  # after the first call (its row left executing)
    "vm-sessions": [3, 4, 5, 6],  # the call, the host's session, its resumption, the last
}
DURABLE = [b for b in BACKENDS if b != "in-context"]


@pytest.mark.parametrize("store_for", DURABLE, indirect=True)
@pytest.mark.parametrize(
    ("program", "after"), [(p, n) for p, cuts in sorted(CUTS.items()) for n in cuts]
)
def test_a_cut_run_resumes_into_the_same_rows_with_none_duplicated(
    program: str, after: int, store_for: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL right after the journal's Nth line (PROSEC_VM_CRASH_AFTER), then `prosec
    resume`: every row a full run has, once; the rows the cut left executing are the
    ones continued (`retry_attempt` 2); the run is completed, resumed once."""
    entry, table, args = CASES[program]
    expected = reference(tmp_path, program, monkeypatch)
    store: Store = store_for(program, entry, table)
    project = store.project
    cut = project.prosec(
        "run",
        project.entry,
        "--backend",
        store.kind,
        *args,
        env={**store.env, "PROSEC_VM_CRASH_AFTER": str(after)},
    )
    assert cut.returncode == -9, cut.stderr
    (run,) = (project.root / "runs").iterdir()
    outcome = {"run_id": run.name, "path": str(run)}
    before = store.rows(outcome)
    assert before["run"]["status"] == "running"
    executing = {e["metadata"]["key"] for e in before["executions"] if e["status"] == "executing"}
    assert executing
    resumed = project.prosec("resume", run.name, "--backend", store.kind, "--json", env=store.env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert json.loads(resumed.stdout)["ok"]
    after_rows = store.rows(outcome)
    got = logical(after_rows, run.name)
    assert got["run"]["metadata"].pop("resumed") == 1
    assert got == expected
    retried = {
        e["metadata"]["key"]: e["metadata"]["retry_attempt"]
        for e in after_rows["executions"]
        if "retry_attempt" in e["metadata"]
    }
    assert retried == dict.fromkeys(executing, 2)


@pytest.mark.parametrize("store_for", DURABLE, indirect=True)
def test_inspect_shows_a_vm_runs_rows_from_its_store(
    store_for: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry, table, args = CASES["vm-errors"]
    store: Store = store_for("vm-errors", entry, table)
    outcome = store.run(args, monkeypatch)
    shown = store.project.prosec("inspect", outcome["run_id"], env=store.env)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    steps = lines[lines.index("steps:") + 1 :]
    assert "    2 try: ✓" in steps
    assert any(line.startswith("      3 try: ✗ — refused: ") for line in steps)  # its body
    assert any(
        line.startswith("        4 receipt = call courier-booking ✗ — refused: ") for line in steps
    )
    assert "      5 catch as refusal: ✓" in steps
    assert "binding parcel (input, root): books" in steps
    data = json.loads(store.project.prosec("inspect", "latest", "--json", env=store.env).stdout)
    assert data["vm"] == store.rows(outcome)


@pytest.mark.parametrize("store_for", BACKENDS, indirect=True)
def test_a_custom_memory_folder_is_the_agents_memory_on_every_backend(
    store_for: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`persist: "society/ledger"`: the agent's memory.md and segments live in that folder
    of the project (in-context: the run's temporary folder), each run a new segment, and
    the `agents` / `agent_segments` rows say scope 'custom' with the folder's memory."""
    entry, table, args = CASES["vm-agents"]
    store: Store = store_for("vm-agents", entry, table)
    for run in (1, 2):
        outcome = store.run(args, monkeypatch)
        assert outcome["ok"], outcome
        if store.kind == "in-context":
            folder = Path(outcome["path"]) / "agents" / "ledger"
        else:
            folder = store.project.root / "society" / "ledger"
        number = 1 if store.kind == "in-context" else run
        memory = (folder / "memory.md").read_text()
        assert memory.startswith("# Agent Memory: ledger")
        segment = (folder / f"ledger-{number:03d}.md").read_text()
        assert f"run: {outcome['run_id']}" in segment
        assert not (folder / f"ledger-{number + 1:03d}.md").exists()
        rows = store.rows(outcome)
        [agent] = [a for a in rows["agents"] if a["name"] == "ledger"]
        assert (agent["scope"], agent["memory"]) == ("custom", memory)
        [mine] = [s for s in rows["segments"] if s["agent_name"] == "ledger"]
        assert (mine["scope"], mine["segment_number"], mine["summary"]) == (
            "custom",
            number,
            segment,
        )
        assert mine["prompt"] == "Enter Ada's swap in the book"
        if store.kind == "in-context":
            break
    assert not (store.project.root / "state" / "agents" / "ledger").exists()


@pytest.mark.parametrize(
    ("persist", "problem"),
    [
        ("../harbour/logs", "must not leave the project"),
        ("/tmp/harbour", "must be a folder inside the project"),
        ("society/ledger", "leaves the project through a symlink"),
    ],
)
def test_a_custom_memory_folder_outside_the_project_is_refused(
    tmp_path: Path, persist: str, problem: str
) -> None:
    """Before the run starts: exit 2, the program file and line named, nothing written
    outside the project and no run created."""
    project = VmProject.create(tmp_path, "vm-agents", "seed-swap", {})
    source = project.root / project.entry
    source.write_text(source.read_text().replace('"society/ledger"', json.dumps(persist)))
    outside = tmp_path / "outside"
    outside.mkdir()
    if persist == "society/ledger":  # a link out of the project in the folder's place
        (project.root / "society").mkdir()
        (project.root / "society" / "ledger").symlink_to(outside)
    result = project.prosec("run", project.entry, "--member", "Ada", "--packets", '["x"]')
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert f"src/seed-swap.prose.md:39: agent ledger: `persist: {persist!r}` {problem}" in (
        result.stderr
    )
    assert list(outside.iterdir()) == []
    assert not (project.root / "runs").exists() or not any((project.root / "runs").iterdir())
