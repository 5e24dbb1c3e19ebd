"""The devtools model: receipt order across ledgers, moved facets and lit edges, the
layered layout and its SVG, the cost summary, and the upstream fixtures (read-only)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from prosec.runtime.costs import cost_summary
from prosec.runtime.devtools import FixtureState, fixture_scene, project_scene
from prosec.runtime.devtools.fixture import infer_edges
from prosec.runtime.devtools.layout import layered_layout
from prosec.runtime.devtools.scene import Inspector, fixture_contract
from prosec.runtime.devtools.svg import render_svg
from prosec.runtime.devtools.timeline import Placed, TopologyEdge, order_receipts, steps
from prosec.runtime.session import open_project

from ..project import Project as Root
from ..project import intent


def receipt(
    node: str, n: int, prev: str | None = None, refs: tuple[str, ...] = (), **kw: Any
) -> dict[str, Any]:
    fingerprints = kw.pop("fingerprints", {"@atomic": f"sha256:{node}{n}"})
    return {
        "content_hash": f"sha256:{node}-{n}",
        "node": node,
        "prev": prev,
        "status": kw.pop("status", "rendered"),
        "wake": {"source": kw.pop("source", "input"), "refs": list(refs)},
        "fingerprints": fingerprints,
        "input_fingerprints": kw.pop("inputs", []),
        "semantic_diff": kw.pop("diff", {}),
        "cost": {"surprise_cause": "input", "tokens": {"fresh": kw.pop("fresh", 0), "reused": 5}},
    }


def test_order_keeps_chains_and_refs_and_prefers_run_order() -> None:
    g1 = receipt("g", 1)
    b1 = receipt("b", 1, refs=("sha256:g-1",))
    g2 = receipt("g", 2, prev="sha256:g-1")
    b2 = receipt("b", 2, prev="sha256:b-1", refs=("sha256:g-2",))
    ledgers = {"g": [g1, g2], "b": [b1, b2]}
    # no run recorded anything: dependencies, then the topological order
    order = [p.receipt["content_hash"] for p in order_receipts(ledgers, ["g", "b"], {})]
    assert order == ["sha256:g-1", "sha256:g-2", "sha256:b-1", "sha256:b-2"]
    runs = {
        "sha256:g-1": ((0, 1), "r1"),
        "sha256:b-1": ((0, 2), "r1"),
        "sha256:g-2": ((1, 1), "r2"),
    }
    placed = order_receipts(ledgers, ["g", "b"], runs)
    assert [p.receipt["content_hash"] for p in placed] == [
        "sha256:g-1",
        "sha256:b-1",
        "sha256:g-2",
        "sha256:b-2",
    ]
    assert [p.run for p in placed] == ["r1", "r1", "r2", None]


def test_steps_light_only_the_edges_of_moved_facets() -> None:
    edges = [TopologyEdge("g", "breaking", "b"), TopologyEdge("g", "features", "f")]
    first = receipt("g", 1, fingerprints={"@atomic": "a1", "breaking": "x1", "features": "y1"})
    second = receipt("g", 2, fingerprints={"@atomic": "a2", "breaking": "x2", "features": "y1"})
    said = receipt("g", 3, diff={"changed": ["features"]})
    skipped = receipt("g", 4, status="skipped")
    timeline = steps([Placed(r) for r in (first, second, said, skipped)], edges)
    assert [s.moved for s in timeline] == [
        ("@atomic", "breaking", "features"),
        ("@atomic", "breaking"),
        ("features",),
        (),
    ]
    assert [s.edges for s in timeline] == [(0, 1), (0,), (1,), ()]
    assert timeline[1].fresh == 0 and timeline[1].reused == 5


def test_layout_is_layered_deterministic_and_escaped() -> None:
    nodes = ["a", "b", "c", "d<&>"]
    links = [("a", "b"), ("b", "c"), ("a", "c"), ("a", "d<&>")]
    one = layered_layout(nodes, links)
    two = layered_layout(list(reversed(nodes)), list(reversed(links)))
    assert one == two
    assert {n: one.boxes[n].layer for n in nodes} == {"a": 0, "b": 1, "c": 2, "d<&>": 1}
    assert len(one.routes[("a", "c")]) == 3  # through a placeholder in the middle column
    edges = [TopologyEdge(a, "@atomic", b) for a, b in links]
    svg = render_svg(one, edges, {"a": "external"})
    assert svg == render_svg(two, edges, {"a": "external"})
    assert 'data-node="d&lt;&amp;&gt;"' in svg and "<&>" not in svg
    assert svg.count('class="edge"') == 4 and 'class="node kind-external"' in svg


def test_layout_survives_a_cycle() -> None:
    layout = layered_layout(["a", "b"], [("a", "b"), ("b", "a")])
    assert set(layout.boxes) == {"a", "b"}


def test_layout_survives_several_cycles() -> None:
    # networkx's layout broke one cycle and then raised NetworkXUnfeasible on the next
    links = [("a", "b"), ("b", "a"), ("c", "d"), ("d", "c"), ("b", "c"), ("e", "e")]
    layout = layered_layout(["a", "b", "c", "d", "e"], links)
    assert set(layout.boxes) == {"a", "b", "c", "d", "e"}
    assert layout == layered_layout(["e", "d", "c", "b", "a"], list(reversed(links)))


def test_cost_summary_by_node_and_cause() -> None:
    rows = [
        receipt("g", 1, fresh=10),
        {
            **receipt("b", 1, fresh=7),
            "cost": {"surprise_cause": "self", "tokens": {"fresh": 7, "reused": 3}},
        },
        {**receipt("b", 2), "status": "skipped", "cost": {"tokens": {"fresh": True, "reused": -1}}},
    ]
    summary = cost_summary(rows, ["b", "g"])
    assert [r["node"] for r in summary["by_node"]] == ["b", "g"]
    assert summary["total"] == {
        "receipts": 3, "rendered": 2, "skipped": 1, "failed": 0,
        "fresh": 17, "reused": 8, "tokens": 25, "reuse_ratio": 0.32,
    }  # fmt: skip
    causes = {r["cause"]: r for r in summary["by_cause"]}
    assert list(causes) == ["input", "self", "external"]
    assert causes["self"]["fresh"] == 7 and causes["input"]["receipts"] == 2


def test_project_scene_and_inspector(tmp_path: Path) -> None:
    doc = intent({"g": {"wake_source": "external"}, "b": {}}, [("b", "g", "@atomic")], ["g"])
    root = Root.create(tmp_path / "p", doc)
    root.world("b", {"v": 1})
    root.run()
    root.world("b", {"v": 2})
    assert root.prosec("tick", "b").returncode == 0
    project = open_project(root.root)
    scene = project_scene(project)
    assert [(s.node, s.status) for s in scene.steps] == [
        ("g", "rendered"),
        ("b", "rendered"),
        ("b", "rendered"),
    ]
    assert all(s.run for s in scene.steps) and all(s.version for s in scene.steps)
    inspector = Inspector(scene, project.backend, lambda name: {"name": name})
    info = inspector.node("b")
    assert info is not None and len(info["versions"]) == 2
    diff = inspector.diff("b", *info["versions"])
    assert diff is not None and [f["path"] for f in diff["files"]] == ["truth.json"]
    assert '-  "own": {\n' not in diff["files"][0]["diff"] or "+" in diff["files"][0]["diff"]
    assert '"v": 2' in diff["files"][0]["diff"]
    assert inspector.artifact("b", "sha256:" + "0" * 64) is None


def _digest(folder: Path) -> str:
    hasher = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        hasher.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            hasher.update(path.read_bytes())
    return hasher.hexdigest()


@pytest.mark.conformance
@pytest.mark.parametrize("name", ["inbox-triage", "contract-redline"])
def test_upstream_devtools_fixtures_open_read_only(upstream: Path, name: str) -> None:
    folder = upstream / "packages/reactor-devtools/fixtures" / name
    before = _digest(folder)
    state = FixtureState(folder)
    scene = fixture_scene(state)
    assert len(scene.steps) == len(state.receipts) > 0
    assert scene.svg.startswith("<svg") and scene.svg.count('class="node kind-') == len(scene.nodes)
    # every receipt that named its cause points back at an earlier step
    assert all(all(r < s.index for r in s.refs) for s in scene.steps)
    edges = infer_edges(state.receipts)
    subscribers = {e.subscriber for e in edges}
    assert subscribers and all(e.producer != e.subscriber for e in edges)
    inspector = Inspector(scene, state, fixture_contract(state))
    for node in scene.nodes:
        info = inspector.node(str(node["node"]))
        assert info is not None
        versions = info["versions"]
        if len(versions) >= 2:
            assert inspector.diff(str(node["node"]), versions[-2], versions[-1]) is not None
    assert _digest(folder) == before  # nothing was written


@pytest.mark.conformance
def test_inbox_triage_topology_inferred_from_receipts(upstream: Path) -> None:
    state = FixtureState(upstream / "packages/reactor-devtools/fixtures/inbox-triage")
    edges = {(e.producer, e.facet, e.subscriber) for e in infer_edges(state.receipts)}
    classifiers = {(p, f, s) for p, f, s in edges if s.startswith("responsibility.classifier-")}
    assert len(classifiers) == 8
    assert all(f == "email:" + s.rsplit("-", 1)[1] for _, f, s in classifiers)
    assert ("responsibility.threader", "rollup", "responsibility.priority") in edges
