"""End to end: `prosec run / trigger / tick` with real subprocess renders."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from prosec.runtime.schemas import validate

from .project import PROSEC, Project, intent

GATEWAY = {"wake_source": "external"}


def diamond(tmp_path: Path, **extra: dict) -> Project:
    nodes = {"g": dict(GATEWAY), "b": {}, "c": {}, "d": {}}
    for name, opts in extra.items():
        nodes[name].update(opts)
    doc = intent(
        nodes,
        [
            ("b", "g", "@atomic"),
            ("c", "g", "@atomic"),
            ("d", "b", "@atomic"),
            ("d", "c", "@atomic"),
        ],
        entry_points=["g"],
    )
    return Project.create(tmp_path / "p", doc)


def test_cold_start_renders_everything_with_the_seed_layout(tmp_path: Path) -> None:
    project = diamond(tmp_path)
    summary = project.run()
    assert sorted(summary["rendered"]) == ["b", "c", "d", "g"] and summary["failed"] == []
    assert project.renders() == {"g": 1, "b": 1, "c": 1, "d": 1}
    run = project.run_dir(summary["run_id"])
    for rel in (
        "compiled-intent.json",
        "root.prose.md",
        "sources/src/d.prose.md",
        "vm.log.md",
        "world-model/caller",
        "agents",
        "receipts/d.jsonl",
        "workspace/d/notes.md",
        "world-model/d/truth.json",
        "world-model/d/.version",
    ):
        assert (run / rel).exists(), rel
    for rel in ("published/truth.json", "published/.version", "receipts.jsonl"):
        assert (project.root / "state/world-model/d" / rel).exists(), rel
    version = (run / "world-model/d/.version").read_text().strip()
    assert (project.root / f"state/world-model/d/versions/sha256_{version[7:]}.bin").exists()
    log = project.log(summary["run_id"])
    assert log[0].startswith(f"# run:{summary['run_id']}")
    assert "root: src/b.prose.md" in log[1:3] or any(line.startswith("root: ") for line in log)
    events = [line for line in log if "→" in line]
    assert events == [
        "1→ g ✓ rendered",
        "2→ ∥start b,c",
        "2a→ b ✓ rendered",
        "2b→ c ✓ rendered",
        "2→ ∥done",
        "3→ d ✓ rendered",
    ] or events[1:5] == ["2→ ∥start b,c", "2a→ c ✓ rendered", "2b→ b ✓ rendered", "2→ ∥done"]
    assert log[-1].startswith("---end ")
    verify = project.prosec("receipts", "verify", ".")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    for node in "gbcd":
        for receipt in project.ledger(node):
            assert validate(receipt, "receipt.schema.json") == []


def test_unchanged_rerun_renders_nothing(tmp_path: Path) -> None:
    project = diamond(tmp_path)
    project.run()
    ledgers = {n: project.ledger(n) for n in "gbcd"}
    project.reset_renders()
    summary = project.run()
    assert summary["rendered"] == [] and summary["skipped"] == [] and summary["waves"] == 0
    assert project.renders() == {}
    assert {n: project.ledger(n) for n in "gbcd"} == ledgers


def test_a_run_links_what_the_last_run_already_holds(tmp_path: Path) -> None:
    """An unchanged source or intent is hard-linked from the latest run, not copied and
    fsynced again; a changed source is a new file with its new bytes, and the earlier
    run keeps its own."""
    project = diamond(tmp_path)
    first = project.run_dir(project.run()["run_id"])
    (project.root / "src" / "b.prose.md").write_text("# b, edited\n")
    second = project.run_dir(project.run()["run_id"])
    for rel in ("compiled-intent.json", "sources/src/c.prose.md", "sources/src/d.prose.md"):
        assert (second / rel).read_bytes() == (first / rel).read_bytes()
        assert (second / rel).stat().st_ino == (first / rel).stat().st_ino
    assert (second / "sources/src/b.prose.md").read_text() == "# b, edited\n"
    assert (first / "sources/src/b.prose.md").read_text() != "# b, edited\n"
    assert (second / "sources/src/b.prose.md").stat().st_ino != (
        first / "sources/src/b.prose.md"
    ).stat().st_ino
    assert (second / "run.json").stat().st_ino != (first / "run.json").stat().st_ino


def test_diamond_join_renders_once_against_settled_inputs(tmp_path: Path) -> None:
    project = diamond(tmp_path)
    project.run()
    project.reset_renders()
    result = project.prosec("trigger", "g", "--data", '{"n": 2}', "--json")
    assert result.returncode == 0, result.stderr
    assert project.renders() == {"g": 1, "b": 1, "c": 1, "d": 1}
    d_last = project.ledger("d")[-1]
    b_tok = project.ledger("b")[-1]["fingerprints"]["@atomic"]
    c_tok = project.ledger("c")[-1]["fingerprints"]["@atomic"]
    assert d_last["input_fingerprints"] == [b_tok, c_tok]
    assert sorted(d_last["wake"]["refs"]) == sorted(
        [project.ledger("b")[-1]["content_hash"], project.ledger("c")[-1]["content_hash"]]
    )
    assert project.published("d")["inputs"]["b"]["inputs"]["g"]["data"] == {"n": 2}


def test_external_trigger_is_fingerprinted_by_content(tmp_path: Path) -> None:
    project = diamond(tmp_path)
    project.prosec("trigger", "g", "--data", '{"n": 1}')
    project.reset_renders()
    again = project.prosec("trigger", "g", "--data", '{"n":1}', "--json")  # same content
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["skipped"] == ["g"]
    assert project.renders() == {}
    assert project.ledger("g")[-1]["status"] == "skipped"
    assert project.ledger("g")[-1]["wake"]["source"] == "external"


def test_one_facet_change_wakes_only_its_subscribers(tmp_path: Path) -> None:
    spec = {
        "facets": [
            {"facet": "funding", "paths": ["truth.data.funding"]},
            {"facet": "hiring", "paths": ["truth.data.hiring"]},
        ]
    }
    doc = intent(
        {
            "g": {**GATEWAY, "facets": ["funding", "hiring"], "spec": spec},
            "f": {},
            "h": {},
            "all": {},
        },
        [("f", "g", "funding"), ("h", "g", "hiring"), ("all", "g", "@atomic")],
        entry_points=["g"],
    )
    project = Project.create(tmp_path / "p", doc)
    assert project.prosec("trigger", "g", "--data", '{"funding": 1, "hiring": 1}').returncode == 0
    project.run()  # cold-start the rest
    project.reset_renders()
    result = project.prosec("trigger", "g", "--data", '{"funding": 2, "hiring": 1}', "--json")
    assert result.returncode == 0, result.stderr
    assert project.renders() == {"g": 1, "f": 1, "all": 1}
    assert project.ledger("g")[-1]["semantic_diff"] == {"changed": ["@atomic", "funding"]}
    project.reset_renders()
    shared = project.prosec("trigger", "g", "--data", '{"funding": 2, "hiring": 1, "x": 9}')
    assert shared.returncode == 0
    assert project.renders() == {"g": 1, "all": 1}


def test_failing_render_commits_nothing_and_next_wake_retries(tmp_path: Path) -> None:
    doc = intent(
        {"g": dict(GATEWAY), "b": {}, "d": {}},
        [("b", "g", "@atomic"), ("d", "b", "@atomic")],
        entry_points=["g"],
    )
    project = Project.create(tmp_path / "p", doc)
    project.run()
    before = project.published("b")
    before_version = (project.root / "state/world-model/b/published/.version").read_text()
    project.world("b", {"_control": {"fail": 3}})
    project.reset_renders()
    result = project.prosec("trigger", "g", "--data", '{"n": 5}', "--json")
    assert result.returncode == 1
    summary = json.loads(result.stdout)
    assert summary["failed"][0]["node"] == "b" and summary["failed"][0]["error"] == "exit-3"
    assert project.renders() == {"g": 1, "b": 1}  # d was not woken
    failed = project.ledger("b")[-1]
    assert failed["status"] == "failed"
    assert failed["fingerprints"] == project.ledger("b")[-2]["fingerprints"]
    assert project.published("b") == before
    assert (project.root / "state/world-model/b/published/.version").read_text() == before_version
    log = project.log(summary["run_id"])
    assert "2→ b ✗ exit-3" in log and log[-1].startswith("---error ")
    # __error.md is a failure too, named by its heading
    project.world("b", {"_control": {"error": "no-results"}})
    result = project.prosec("run", ".", "--json")
    assert json.loads(result.stdout)["failed"][0]["error"] == "no-results"
    # the next wake retries: a failed receipt establishes no memo
    project.world("b", {})
    project.reset_renders()
    summary = project.run()
    assert summary["rendered"] == ["b", "d"]
    assert project.published("d")["inputs"]["b"]["inputs"]["g"]["data"] == {"n": 5}


def test_postcondition_violation_fails_the_commit(tmp_path: Path) -> None:
    validator = {
        "mode": "deterministic",
        "predicates": [{"id": "ok", "kind": "always", "path": "truth.own.ok", "equals": True}],
        "schema": {"type": "object", "required": ["truth"]},
    }
    project = Project.create(tmp_path / "p", intent({"a": {"validator": validator}}, []))
    project.world("a", {"ok": False})
    summary = project.run()
    assert summary["failed"] == [
        {"node": "a", "error": "postcondition", "reason": summary["failed"][0]["reason"]}
    ]
    assert "[always] ok" in summary["failed"][0]["reason"]
    assert project.published("a") is None
    project.world("a", {"ok": True})
    assert project.run()["rendered"] == ["a"]


def test_missing_attestation_fails_until_attested(tmp_path: Path) -> None:
    validator = {"mode": "render-attested", "attested": [{"id": "calm", "text": "Tone is calm."}]}
    project = Project.create(tmp_path / "p", intent({"a": {"validator": validator}}, []))
    summary = project.run()
    assert summary["failed"][0]["error"] == "missing-attestation"
    project.world("a", {"_control": {"attest": ["calm"]}})
    assert project.run()["rendered"] == ["a"]


def test_immaterial_churn_is_skipped_after_render(tmp_path: Path) -> None:
    spec = {"rules": [{"path": "**.fetched_at", "material": False}]}
    doc = intent({"a": {"spec": spec}, "b": {}}, [("b", "a", "@atomic")])
    project = Project.create(tmp_path / "p", doc)
    project.world("a", {"_control": {"stamp": True}, "v": 1})
    project.run()
    project.reset_renders()
    result = project.prosec("tick", "a", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["skipped"] == ["a"]
    assert project.renders() == {"a": 1}  # rendered, nothing material moved, b not woken
    assert project.ledger("a")[-1]["wake"]["source"] == "self"


def test_parallel_renders_overlap(tmp_path: Path) -> None:
    doc = intent({"x": {}, "y": {}}, [])
    project = Project.create(tmp_path / "p", doc)
    project.world("x", {"_control": {"sleep": 1.0}})
    project.world("y", {"_control": {"sleep": 1.0}})
    summary = project.run("--jobs", "2")
    assert sorted(summary["rendered"]) == ["x", "y"]
    times: dict[str, dict[str, float]] = {}
    for line in (project.root / "timeline.log").read_text().splitlines():
        node, what, at = line.split()
        times.setdefault(node, {})[what] = float(at)
    assert times["x"]["start"] < times["y"]["end"] and times["y"]["start"] < times["x"]["end"]
    assert "1→ ∥start x,y" in project.log(summary["run_id"])


def test_jobs_one_renders_sequentially(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", intent({"x": {}, "y": {}}, []))
    project.world("x", {"_control": {"sleep": 0.3}})
    project.world("y", {"_control": {"sleep": 0.3}})
    project.run("--jobs", "1")
    spans = {}
    for line in (project.root / "timeline.log").read_text().splitlines():
        node, what, at = line.split()
        spans.setdefault(node, {})[what] = float(at)
    first, second = sorted(spans.values(), key=lambda s: s["start"])
    assert first["end"] <= second["start"]


def test_wakes_during_a_render_coalesce(tmp_path: Path) -> None:
    doc = intent({"g": dict(GATEWAY), "b": {}}, [("b", "g", "@atomic")], entry_points=["g"])
    project = Project.create(tmp_path / "p", doc)
    project.run()
    os.mkfifo(project.root / "gate")
    project.world("g", {"_control": {"fifo": "gate"}})
    project.reset_renders()
    first = subprocess.Popen(
        [str(PROSEC), "trigger", "g", "--data", '{"n": 1}', "--json"],
        cwd=project.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while project.renders().get("g", 0) < 1:  # the render is now blocked on the fifo
        assert time.monotonic() < deadline, "render never started"
        time.sleep(0.05)
    for n in (2, 3):
        queued = project.prosec("trigger", "g", "--data", json.dumps({"n": n}))
        assert queued.returncode == 0, queued.stderr
        assert "queued" in queued.stdout
    project.world("g", {})
    with open(project.root / "gate", "w") as gate:
        gate.write("go\n")
    _out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert project.renders()["g"] == 2  # one render + one coalesced follow-up
    assert project.published("g")["data"] == {"n": 3}
    assert project.published("b")["inputs"]["g"]["data"] == {"n": 3}
    refs = project.ledger("g")[-1]["wake"]["refs"]
    assert len(refs) == 2  # both queued wakes' data tokens, merged into one


def test_renders_read_pinned_versions(tmp_path: Path) -> None:
    project = diamond(tmp_path)
    summary = project.run()
    run = project.run_dir(summary["run_id"])
    pinned = json.loads((run / "workspace/d/__inputs.json").read_text())
    for item in pinned["inputs"]:
        path = Path(item["path"])
        assert path.is_absolute() and path.is_relative_to(run)
        assert (path / ".version").read_text().strip() == item["version"]
        assert item["token"] == project.ledger(item["producer"])[-1]["fingerprints"]["@atomic"]
