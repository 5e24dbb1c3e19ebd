"""Seed 004 rows of the VM where the order steps run in, nested bodies and the entry's
returns meet the bindings key (name, run, execution scope), on every backend:

- `anon_NNN` is the bare invocation's place in the program, whatever order parallel
  branches finish in, on every backend and after a cut and `prosec resume`;
- if/elif/else, try/catch/finally bodies are execution rows of their own (parent the
  statement's row): a `let` in a body is scoped to it, and seed 004's scope-resolution
  query from a row inside finds it, from outside the enclosing one;
- an `output` binding (a declared return) and a root `let` of the same name are two
  rows: the output is scoped to the run's `output` row.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from . import test_vm_conformance as conformance
from .backends.sql_stores import postgres_store, sqlite_store
from .test_vm_conformance import BACKENDS, DURABLE, Store, logical
from .test_vm_seed_queries import OURS, seed_queries
from .vm.support import VmProject

ORDER = """---
name: stall-notes
kind: function
---

# Stall notes

### Returns

- `note`: the last note

### Execution

```prose
agent slow:
  prompt: "You take your time."

agent quick:
  prompt: "You answer at once."

parallel:
  session: slow
    prompt: "Note the first stall"
  session: quick
    prompt: "Note the second stall"
session "Note the market closing"
let note = "closed"
return note
```
"""

SCOPES = """---
name: rain-check
kind: function
---

# Rain check

### Returns

- `note`: what to take

### Execution

```prose
let note = "sun hat"
if **it is raining**:
  let note = "umbrella"
  session "Pack the {note}"
try:
  let spare = "socks"
  throw "the bag is full"
catch as full:
  let spare = "none"
  session "Leave the spare behind: {full}"
return note
```
"""

TABLE = {"answers": {"it is raining": True}}
store_for = conformance.store_for  # the suite's fixture: one store per backend


def project(tmp: Path, name: str, text: str, table: dict[str, Any]) -> VmProject:
    """A scratch project with one program (the fake agent renders)."""
    return rewrite(VmProject.create(tmp, "vm-sessions", "book-club", table), name, text)


def rewrite(made: VmProject, name: str, text: str) -> VmProject:
    """`made` with `text` as its only program."""
    for old in (made.root / "src").iterdir():
        old.unlink()
    for old in made.root.glob("*.test.prose.md"):
        old.unlink()
    (made.root / "src" / f"{name}.prose.md").write_text(text)
    made.entry = f"src/{name}.prose.md"
    return made


def run(store: Store, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    outcome = store.run([], monkeypatch)
    assert outcome["ok"], outcome
    return logical(store.rows(outcome), outcome["run_id"])


def anonymous(rows: dict[str, Any]) -> dict[str, tuple[str | None, str]]:
    """anon_NNN → (scope, the value's first words)."""
    return {
        name: (scope, " ".join(value.split()[:2]))
        for name, scope, _, value, _ in rows["bindings"]
        if name.startswith("anon_")
    }


# the second branch ends first, the first half a second later
SLOW = {"sleep": {"slow": 0.6}}
IN_ORDER = {
    "anon_001": (None, "session slow:"),
    "anon_002": (None, "session quick:"),
    "anon_003": (None, "session stall-notes:"),
}


@pytest.mark.parametrize("store_for", BACKENDS, indirect=True)
def test_anonymous_bindings_are_numbered_by_program_position_not_finishing_order(
    store_for: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store: Store = store_for("vm-sessions", "book-club", SLOW)
    rewrite(store.project, "stall-notes", ORDER)
    rows = run(store, monkeypatch)
    assert anonymous(rows) == IN_ORDER


@pytest.mark.parametrize("store_for", DURABLE, indirect=True)
def test_a_run_cut_in_its_parallel_block_resumes_with_the_same_anonymous_names(
    store_for: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cut after the quick branch's step is journaled (the slow one still running),
    resumed: the names are the ones an uncut run gives."""
    store: Store = store_for("vm-sessions", "book-club", SLOW)
    rewrite(store.project, "stall-notes", ORDER)
    cut = store.project.prosec(
        "run",
        store.project.entry,
        "--backend",
        store.kind,
        env={**store.env, "PROSEC_VM_CRASH_AFTER": "1"},
    )
    assert cut.returncode == -9, cut.stderr
    (folder,) = (store.project.root / "runs").iterdir()
    resumed = store.project.prosec(
        "resume", folder.name, "--backend", store.kind, "--json", env=store.env
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    rows = logical(store.rows({"run_id": folder.name, "path": str(folder)}), folder.name)
    assert anonymous(rows) == IN_ORDER


@pytest.mark.parametrize("store_for", BACKENDS, indirect=True)
def test_bodies_are_rows_and_frames_and_an_output_keeps_its_own_row(
    store_for: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store: Store = store_for("vm-sessions", "book-club", TABLE)
    rewrite(store.project, "rain-check", SCOPES)
    rows = run(store, monkeypatch)
    executions = rows["executions"]
    shape = {
        key: (row["parent"], row["metadata"]["kind"], row["status"], row["text"])
        for key, row in executions.items()
        if row["metadata"]["kind"] != "statement"
    }
    assert shape == {
        "main/1.0": ("main/1", "branch", "completed", "if **it is raining**:"),
        "main/2.try": ("main/2", "try", "failed", "try:"),
        "main/2.catch": ("main/2", "catch", "completed", "catch as full:"),
        "output": (None, "output", "completed", "output: note"),
    }
    assert executions["main/1.0/1"]["parent"] == "main/1.0"
    scoped = {(name, scope): (kind, value) for name, scope, kind, value, _ in rows["bindings"]}
    assert scoped[("note", None)] == ("let", "sun hat")  # the root's, not the branch's
    assert scoped[("note", "main/1.0")] == ("let", "umbrella")
    assert scoped[("note", "output")] == ("output", "sun hat")
    assert scoped[("spare", "main/2.try")] == ("let", "socks")
    assert scoped[("spare", "main/2.catch")] == ("let", "none")
    assert scoped[("full", "main/2.catch")][0] == "let"
    assert {k for k in scoped if k[0].startswith("anon_")} == {
        ("anon_001", "main/1.0"),
        ("anon_002", "main/2.catch"),
    }


@pytest.mark.parametrize(
    "queries", ["ours", pytest.param("seed", marks=pytest.mark.conformance)], indirect=False
)
@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_the_seed_resolution_query_resolves_through_body_rows(
    kind: str, queries: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Seed 004's scope-chain query, unchanged, from rows inside and outside the bodies."""
    from .backends.sql_stores import database

    made = project(tmp_path, "rain-check", SCOPES, TABLE)
    text = OURS["scope"]
    if queries == "seed":
        seeds: Path = request.getfixturevalue("seeds")
        text = seed_queries(next(seeds.glob("004_*.txt")).read_text(encoding="utf-8"))["scope"]

    def check(sql: Any) -> None:
        outcome = made.run("--backend", kind, env={**sql.env, "OPENPROSE_USER_ROOT": str(tmp_path)})
        run_id = outcome["run_id"]
        ids = {
            json.loads(m)["key"] if isinstance(m, str) else m["key"]: i
            for i, m in sql.query(
                "SELECT id, metadata FROM openprose.execution WHERE run_id = %s", run_id
            )
        }

        def resolve(name: str, start: str | None) -> tuple[Any, ...]:
            where = ids[start] if start else -1
            found = sql.query(
                text.replace("{start}", str(where)).replace("{name}", name).replace("{run}", run_id)
            )
            assert len(found) == 1, (name, start, found)
            return found[0][2:5]  # execution_id, binding, value

        assert resolve("note", "main/1.0/1") == (ids["main/1.0"], "let", "umbrella")
        assert resolve("note", "main/2.catch/1") == (None, "let", "sun hat")
        assert resolve("note", "output") == (ids["output"], "output", "sun hat")
        assert resolve("note", None) == (None, "let", "sun hat")
        assert resolve("spare", "main/2.catch/1") == (ids["main/2.catch"], "let", "none")
        assert resolve("full", "main/2.catch/1")[:2] == (ids["main/2.catch"], "let")

    if kind == "sqlite":
        check(sqlite_store(made.root / "state" / "prosec.db", made.root / "runs"))
        return
    with database(request.getfixturevalue("postgres_url")) as url:
        check(postgres_store(url, made.root / "runs"))


PIPELINE = """---
name: pantry-notes
kind: function
---

# Pantry notes

### Returns

- `notes`: one note a dish

### Execution

```prose
let dishes = ["soup", "bread"]
let notes = dishes
  | map:
      session "Describe the {item}"
return notes
```
"""


@pytest.mark.parametrize("store_for", BACKENDS, indirect=True)
def test_each_pipeline_item_is_a_row_and_the_frame_of_its_anonymous_binding(
    store_for: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bare session of a `map:` body runs once an item: the same name, anon_001,
    in each item's row (not one row overwritten, nor names by finishing order)."""
    store: Store = store_for("vm-sessions", "book-club", {})
    rewrite(store.project, "pantry-notes", PIPELINE)
    rows = run(store, monkeypatch)
    items = {
        key: (row["parent"], row["text"], row["metadata"]["iteration"])
        for key, row in rows["executions"].items()
        if row["metadata"]["kind"] == "item"
    }
    assert items == {
        "main/1|0@0": ("main/1", "map item 1", 0),
        "main/1|0@1": ("main/1", "map item 2", 1),
    }
    scoped = {(name, scope): value for name, scope, _, value, _ in rows["bindings"]}
    assert scoped[("item", "main/1|0@1")] == "bread"
    assert {k: v.split(": ", 1)[1].split(" {")[0] for k, v in scoped.items() if "anon" in k[0]} == {
        ("anon_001", "main/1|0@0"): "Describe the soup",
        ("anon_001", "main/1|0@1"): "Describe the bread",
    }
