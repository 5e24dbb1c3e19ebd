"""End to end: tampered and torn ledgers, untrusted names and paths, missing bindings."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from prosec.runtime.runs import runs_in_order

from .project import Project, intent


def chain(tmp_path: Path) -> Project:
    doc = intent({"a": {}, "b": {}}, [("b", "a", "@atomic")])
    project = Project.create(tmp_path / "p", doc)
    project.run()
    project.world("a", {"v": 2})
    assert project.prosec("tick", "a").returncode == 0
    return project


def test_tampered_durable_ledger_is_detected(tmp_path: Path) -> None:
    project = chain(tmp_path)
    ledger = project.root / "state/world-model/b/receipts.jsonl"
    data = bytearray(ledger.read_bytes())
    second = data.index(b"\n") + 1
    at = data.index(b'"status":"rendered"', second) + 11
    data[at] = ord("X")
    ledger.write_bytes(bytes(data))
    verify = project.prosec("receipts", "verify", ".", "--json")
    assert verify.returncode == 1
    findings = json.loads(verify.stdout)["findings"]
    assert {(f["node"], f["position"]) for f in findings} >= {("b", "2")}
    assert all(f["file"].endswith("receipts.jsonl") for f in findings)
    run = project.prosec("run", ".")
    assert run.returncode == 2
    assert "cannot be trusted" in run.stderr and "Traceback" not in run.stderr


def test_torn_last_line_is_reported_never_used(tmp_path: Path) -> None:
    project = chain(tmp_path)
    ledger = project.root / "state/world-model/a/receipts.jsonl"
    committed = ledger.read_bytes()
    with open(ledger, "ab") as handle:
        handle.write(b'{"content_hash":"sha256:00')
    verify = project.prosec("receipts", "verify", str(ledger))
    assert verify.returncode == 1 and "torn last line" in verify.stderr
    # issue 9: the next runner cuts the torn tail (no pending record held it: it was
    # never committed) and says so, instead of refusing the project for good
    run = project.prosec("run", ".")
    assert run.returncode == 0 and "cut a torn last line" in run.stderr, run.stderr
    assert ledger.read_bytes() == committed


def test_tampered_version_blob_is_detected(tmp_path: Path) -> None:
    project = chain(tmp_path)
    blob = sorted((project.root / "state/world-model/a/versions").glob("*.bin"))[0]
    data = bytearray(blob.read_bytes())
    data[-3] ^= 1
    blob.write_bytes(bytes(data))
    verify = project.prosec("receipts", "verify", "state", "--json")
    assert verify.returncode == 1
    (finding,) = json.loads(verify.stdout)["findings"]
    assert finding["node"] == "a" and finding["file"].endswith(blob.name)


def test_unsafe_node_names_are_refused(tmp_path: Path) -> None:
    for bad in ("../evil", "/abs", "a/b", ".."):
        doc = intent({"ok": {}}, [])
        doc["topology"]["nodes"][0]["node"] = bad
        doc["canonicalizers"][0]["node"] = bad
        doc["postconditions"][0]["node"] = bad
        doc["contract_fingerprints"] = {bad: doc["contract_fingerprints"]["ok"]}
        project = Project.create(tmp_path / f"p{abs(hash(bad))}", doc)
        result = project.prosec("run", ".")
        assert result.returncode == 2, bad
        assert "safe single path segment" in result.stderr
        assert not (project.root / "runs").exists()


def test_symlinks_in_an_artifact_are_refused(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", intent({"a": {}}, []))
    (project.root / "evil.py").write_text(
        "import os, pathlib\n"
        "out = pathlib.Path(os.environ['PROSEC_OUTPUT'])\n"
        "os.symlink('/etc/passwd', out / 'leak.json')\n"
    )
    result = project.prosec("run", ".", "--json", "--render", "a=command:python3 evil.py")
    assert result.returncode == 1
    (failure,) = json.loads(result.stdout)["failed"]
    assert failure["error"] == "invalid-artifact" and "symlink" in failure["reason"]


def test_replay_dir_cannot_escape_the_root(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", intent({"a": {}}, []))
    result = project.prosec("run", ".", "--render", "a=replay:../outside")
    assert result.returncode == 2 and "climbs out" in result.stderr


def test_missing_render_binding_fails_before_anything_runs(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", intent({"alpha": {}, "beta": {}}, []), toml="")
    result = project.prosec("run", ".")
    assert result.returncode == 2
    assert "node 'alpha' has no render bound" in result.stderr
    assert "[render.alpha]" in result.stderr and "--render" in result.stderr
    assert not (project.root / "runs").exists() and not (project.root / "state").exists()


def test_missing_manifest_and_bad_config_are_usage_errors(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p", intent({"a": {}}, []))
    (project.root / "prose.toml").write_text("[run]\njobs = 0\n")
    result = project.prosec("run", ".")
    assert result.returncode == 2 and "prose.toml:2: run.jobs: " in result.stderr
    (project.root / "prose.toml").write_text("")
    os.remove(project.root / "dist/manifest.active.json")
    result = project.prosec("run", ".")
    assert result.returncode == 2 and "prosec build" in result.stderr


def test_invalid_compiled_intent_names_the_problem(tmp_path: Path) -> None:
    doc = intent({"a": {}, "b": {}}, [("b", "a", "nosuchfacet")])
    project = Project.create(tmp_path / "p", doc)
    result = project.prosec("run", ".")
    assert result.returncode == 2
    assert "$.topology.edges[0].facet: producer `a` emits no facet `nosuchfacet`" in result.stderr
    cyclic = intent({"a": {}, "b": {}}, [("b", "a", "@atomic"), ("a", "b", "@atomic")])
    project.set_intent(cyclic)
    result = project.prosec("run", ".")
    assert result.returncode == 2
    assert "$.topology.acyclic: `acyclic` is true but the graph has a cycle `a` → `b` → `a`" in (
        result.stderr
    )


def test_inspect_and_status(tmp_path: Path) -> None:
    project = chain(tmp_path)
    # oldest first: two runs may share a second, so order by creation, not by id
    runs = [run.path.name for run in runs_in_order(project.root / "runs")]
    data = json.loads(project.prosec("inspect", runs[0], "--json").stdout)
    assert [w["nodes"] for w in data["waves"]] == [["a"], ["b"]]
    assert data["counts"] == {"rendered": 2} and data["state"] == "complete"
    text = project.prosec("inspect", runs[1]).stdout
    assert "a: rendered — woken by its cadence" in text and "b: rendered — woken by a;" in text
    status = json.loads(project.prosec("status", ".", "--json").stdout)
    assert [n["receipts"] for n in status["nodes"]] == [2, 2]
    listed = json.loads(project.prosec("receipts", "list", ".", "--node", "b", "--json").stdout)
    assert [r["index"] for r in listed] == [1, 2] and listed[1]["prev"] == listed[0]["hash"]
    assert project.prosec("inspect", "../../etc").returncode == 2


def test_inspect_reads_the_old_prose_layout(tmp_path: Path) -> None:
    old = tmp_path / ".prose/runs/20260115-143052-a7b3c9"
    (old / "bindings").mkdir(parents=True)
    (old / "agents/captain").mkdir(parents=True)
    (old / "state.md").write_text(
        "# Execution State\n\nrun: 20260115-143052-a7b3c9\nprogram: feature.prose\n"
    )
    (old / "bindings/research.md").write_text("# research\n\nkind: let\n\n---\n\nvalue\n")
    project = Project.create(tmp_path / "p", intent({"a": {}}, []))
    data = json.loads(project.prosec("inspect", str(old), "--json").stdout)
    assert data["legacy"] and data["program"] == "feature.prose"
    assert [(b["name"], b["kind"], b["value"]) for b in data["bindings"]] == [
        ("research", "let", "value")
    ]
    assert [(a["name"], a["scope"]) for a in data["agents"]] == [("captain", "execution")]


def test_tampered_published_file_and_run_ledger_are_detected(tmp_path: Path) -> None:
    project = chain(tmp_path)
    published = project.root / "state/world-model/a/published/truth.json"
    published.write_text(published.read_text().replace("2", "3"))
    verify = project.prosec("receipts", "verify", ".", "--json")
    assert verify.returncode == 1
    (finding,) = json.loads(verify.stdout)["findings"]
    assert finding["node"] == "a" and finding["position"] == ".version"


def test_inspect_latest_and_latest_n(tmp_path: Path) -> None:
    project = chain(tmp_path)
    runs = [run.path.name for run in runs_in_order(project.root / "runs")]
    assert len(runs) == 2
    latest = json.loads(project.prosec("inspect", "latest", "--json").stdout)
    previous = json.loads(project.prosec("inspect", "latest~1", "--json").stdout)
    assert (latest["run_id"], previous["run_id"]) == (runs[1], runs[0])
    missing = project.prosec("inspect", "latest~2")
    assert missing.returncode == 2 and "only 2 runs" in missing.stderr


@pytest.mark.parametrize("content", [b'{"value": NaN}', b'{"value": 1e400}', b'{"val', b"\xff"])
def test_a_tampered_key_value_or_inbox_file_is_a_usage_error(
    tmp_path: Path, content: bytes
) -> None:
    """The backends' own records are read strictly too (issue 9): an edited kv, pending
    or inbox file is exit 2 naming it, never a crash."""
    project = chain(tmp_path)
    kv = project.root / "state/kv/inbox.claim.json"  # read by every runner
    for path in (kv, project.root / "state/inbox/00000000000000000001-aaaaaa.json"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        run = project.prosec("run", ".")
        assert run.returncode == 2, run.stderr
        assert path.name in run.stderr and "cannot be trusted" in run.stderr
        path.unlink()
