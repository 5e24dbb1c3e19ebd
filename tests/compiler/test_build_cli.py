"""`prosec build / validate / activate / explain / graph` as real processes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ..conftest import CORPUS, Runner


def project(tmp_path: Path, name: str = "wiring-facets") -> Path:
    root = tmp_path / name
    shutil.copytree(CORPUS / name, root)
    return root


def test_build_then_noop_then_incremental(tmp_path: Path, run_prosec: Runner) -> None:
    root = project(tmp_path)
    first = run_prosec("build", root, "--offline-tools")
    assert first.returncode == 0
    assert "full build: no build cache yet" in first.stderr
    written = (root / "dist" / "manifest.next.json").read_bytes()
    second = run_prosec("build", root, "--offline-tools")
    assert second.returncode == 0
    assert "up to date" in second.stderr
    target = root / "src" / "fx-hedger.prose.md"
    target.write_text(target.read_text().replace("open hedge", "live hedge"))
    third = run_prosec("build", root, "--offline-tools")
    assert "incremental build: reparsed 1 of 4 files" in third.stderr
    assert (root / "dist" / "manifest.next.json").read_bytes() != written
    fourth = run_prosec("build", root, "--offline-tools", "--strict")
    assert "full build: prose.toml or the command-line settings changed" in fourth.stderr


def test_check_reports_a_stale_manifest(tmp_path: Path, run_prosec: Runner) -> None:
    root = project(tmp_path)
    assert run_prosec("build", root, "--check", "--offline-tools").returncode == 1
    assert run_prosec("build", root, "--offline-tools").returncode == 0
    assert run_prosec("build", root, "--check", "--offline-tools").returncode == 0
    target = root / "src" / "rates-desk.prose.md"
    target.write_text(target.read_text().replace("hedge ratio", "hedge ratios"))
    stale = run_prosec("build", root, "--check", "--offline-tools", "--no-cache")
    assert stale.returncode == 1 and "stale" in stale.stderr


def test_emit_artifacts(tmp_path: Path, run_prosec: Runner) -> None:
    root = project(tmp_path)
    assert run_prosec("build", root, "--offline-tools", "--emit-artifacts").returncode == 0
    spec = json.loads((root / "dist" / "canonicalizers" / "price-board.json").read_text())
    assert [f["facet"] for f in spec["facets"]] == ["equities", "rates", "fx"]
    validator = json.loads((root / "dist" / "postconditions" / "rates-desk.json").read_text())
    assert validator["mode"] == "render-attested"
    intent = json.loads((root / "dist" / "manifest.next.json").read_text())
    assert spec == next(c["spec"] for c in intent["canonicalizers"] if c["node"] == "price-board")


def test_validate_and_activate(tmp_path: Path, run_prosec: Runner) -> None:
    root = project(tmp_path)
    missing = run_prosec("activate", root)
    assert missing.returncode == 1 and "run `prosec build` first" in missing.stderr
    assert run_prosec("build", root, "--offline-tools").returncode == 0
    manifest = root / "dist" / "manifest.next.json"
    assert run_prosec("validate", manifest).returncode == 0
    assert run_prosec("activate", root).returncode == 0
    assert (root / "dist" / "manifest.active.json").read_bytes() == manifest.read_bytes()
    document = json.loads(manifest.read_text())
    document["topology"]["edges"][0]["producer"] = "ghost"
    document["contract_fingerprints"] = {}
    manifest.write_text(json.dumps(document))
    invalid = run_prosec("validate", manifest, "--format", "json")
    assert invalid.returncode == 1
    found = {p["path"] for p in json.loads(invalid.stdout)}
    assert "$.topology.edges[0].producer" in found and "$.contract_fingerprints" in found
    active = (root / "dist" / "manifest.active.json").read_bytes()
    assert run_prosec("activate", root).returncode == 1
    assert (root / "dist" / "manifest.active.json").read_bytes() == active


def test_validate_reports_non_json(tmp_path: Path, run_prosec: Runner) -> None:
    path = tmp_path / "x.json"
    path.write_text("{not json")
    result = run_prosec("validate", path)
    assert result.returncode == 1 and "$: not JSON" in result.stdout


def test_explain_json_and_unknown_node(tmp_path: Path, run_prosec: Runner) -> None:
    root = project(tmp_path, "wiring-pinned")
    result = run_prosec("explain", "capacity-plan", root, "--format", "json")
    data = json.loads(result.stdout)
    assert data["needs"][0]["rung"] == "pinned"
    assert data["needs"][0]["edges"] == ["forecast-ml.@atomic"]
    unknown = run_prosec("explain", "nobody", root)
    assert unknown.returncode == 2 and "capacity-plan" in unknown.stderr


def test_graph_from_a_manifest(tmp_path: Path, run_prosec: Runner) -> None:
    root = project(tmp_path, "wiring-diamond")
    assert run_prosec("build", root, "--offline-tools").returncode == 0
    from_sources = run_prosec("graph", root, "--format", "json").stdout
    from_manifest = run_prosec(
        "graph", "--manifest", root / "dist" / "manifest.next.json", "--format", "json"
    ).stdout
    assert from_sources == from_manifest


def test_unresolved_tool_fails_the_build_unless_offline(tmp_path: Path, run_prosec: Runner) -> None:
    root = tmp_path / "tools"
    (root / "src").mkdir(parents=True)
    (root / "src" / "fetch.prose.md").write_text(
        "---\nname: fetch\nkind: function\n---\n\n### Returns\n\n- `r`: x\n\n"
        "### Tools\n\n- `cli:surely-not-installed-prosec-tool`: nothing\n"
    )
    online = run_prosec("build", root, "--format", "json")
    assert online.returncode == 1
    assert [d["code"] for d in json.loads(online.stdout)] == ["tool_unresolved"]
    assert run_prosec("build", root, "--offline-tools").returncode == 0


def test_missing_root_is_a_usage_error(tmp_path: Path, run_prosec: Runner) -> None:
    assert run_prosec("build", tmp_path / "missing").returncode == 2


def test_an_invalid_prose_toml_setting_is_a_usage_error(tmp_path: Path, run_prosec: Runner) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "helper.prose.md").write_text(
        "---\nname: helper\nkind: function\n---\n\n### Returns\n\n- `answer`: text\n"
    )
    (tmp_path / "prose.toml").write_text('[run]\njobs = "two"\n')
    result = run_prosec("build", cwd=tmp_path)
    assert result.returncode == 2
    assert "prose.toml" in result.stderr and "run.jobs" in result.stderr
    assert not (tmp_path / "dist").exists()
