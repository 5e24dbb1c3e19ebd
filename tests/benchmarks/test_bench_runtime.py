"""Runtime benchmarks (`make bench`): a 1,000-node DAG and 50 MB fingerprinting.

Timings are printed, not asserted (the machine is shared); each figure is the best of
a few repetitions. Correctness of what was measured is asserted.
"""

from __future__ import annotations

import gc
import json
import os
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from prosec.runtime import fsio
from prosec.runtime.canonical import canonical_json, token
from prosec.runtime.canonicalizer import CanonicalizerSpec, fingerprint, reduce
from prosec.runtime.executor import EngineOptions
from prosec.runtime.reconciler import Wake
from prosec.runtime.session import open_project
from prosec.runtime.truth import build_truth

from .aims import record

RENDER_MODULE = """
import json
def noop(request):
    return None
def passthrough(request):
    pinned = json.loads(request.inputs_file.read_text())
    tokens = [item["token"] for item in pinned["inputs"]]
    (request.output / "t.json").write_text(json.dumps({"in": tokens}))
"""


def best(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def dag(n: int = 1000, layers: int = 10, seed: int = 1) -> dict[str, Any]:
    rng = random.Random(seed)
    width = n // layers
    names = [[f"n{layer:02d}_{i:03d}" for i in range(width)] for layer in range(layers)]
    nodes, edges = [], []
    for layer, row in enumerate(names):
        for name in row:
            gateway = layer == 0
            node: dict[str, Any] = {
                "node": name,
                "contract_fingerprint": token(name),
                "wake_source": "external" if gateway else "input",
            }
            if gateway:
                node["render"] = {"kind": "ingress"}
            nodes.append(node)
            if not gateway:
                for producer in rng.sample(names[layer - 1], 2):
                    edges.append({"subscriber": name, "producer": producer, "facet": "@atomic"})
    return {
        "kind": "openprose.compile-phase-ir",
        "version": 2,
        "sources": [],
        "topology": {
            "nodes": nodes,
            "edges": edges,
            "entry_points": [n["node"] for n in nodes if n["wake_source"] == "external"],
            "acyclic": True,
        },
        "canonicalizers": [
            {"node": n["node"], "artifact": "x", "facets": ["@atomic"]} for n in nodes
        ],
        "postconditions": [
            {"node": n["node"], "artifact": "x", "mode": "deterministic"} for n in nodes
        ],
        "contract_fingerprints": {n["node"]: n["contract_fingerprint"] for n in nodes},
        "diagnostics": [],
    }


def reconcile_once(root: Path, wakes: dict[str, Wake], all_nodes: bool) -> tuple[float, Any]:
    start = time.perf_counter()
    project = open_project(root)
    project.bind_renders({})
    assert project.backend.try_lock()
    try:
        project.recover()
        run = project.create_run("run", [], [])
        engine = project.engine(EngineOptions(jobs=2))
        pending = set(project.intent.order) if all_nodes else set(wakes)
        setup = time.perf_counter()
        summary = engine.reconcile(run, pending, dict(wakes))
        project.finish(run, summary)
    finally:
        project.backend.unlock()
    end = time.perf_counter()
    return end - start, (summary, end - setup)


@contextmanager
def counted_fsyncs() -> Iterator[list[int]]:
    """Count the fsyncs this process makes (the commit path runs here; renders in
    workers write no durable state); a group commit's syncfs of the whole filesystem
    counts as one."""
    real, count = os.fsync, [0]
    syncfs = getattr(fsio, "_SYNCFS", None)

    def fsync(fd: int) -> None:
        count[0] += 1
        real(fd)

    def sync(fd: int) -> int:
        count[0] += 1
        return syncfs(fd) if syncfs is not None else 0

    os.fsync = fsync
    if syncfs is not None:
        fsio._SYNCFS = sync  # type: ignore[attr-defined]
    try:
        yield count
    finally:
        os.fsync = real
        if syncfs is not None:
            fsio._SYNCFS = syncfs  # type: ignore[attr-defined]


def durable_floor(folder: Path, nodes: int) -> float:
    """The floor of committing `nodes` results durably: one small file per node written
    and fsynced, then one fsync of the folder holding them."""
    folder.mkdir()
    start = time.perf_counter()
    for index in range(nodes):
        fd = os.open(folder / f"n{index}.json", os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            os.write(fd, json.dumps({"node": index, "token": token(index)}).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
    handle = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)
    return time.perf_counter() - start


@pytest.mark.parametrize("render", ["noop", "passthrough"])
def test_thousand_node_dag(tmp_path: Path, render: str) -> None:
    root = tmp_path / "dag"
    (root / "dist").mkdir(parents=True)
    (root / "dist/manifest.active.json").write_text(json.dumps(dag()))
    (root / "bench_renders.py").write_text(RENDER_MODULE)
    (root / "prose.toml").write_text(
        f'[render.default]\nkind = "python"\ncallable = "bench_renders:{render}"\n'
    )
    with counted_fsyncs() as fsyncs:
        cold, (summary, cold_engine) = reconcile_once(root, {}, True)
    assert len(summary.rendered) == 1000 and not summary.failed
    floor = min(durable_floor(tmp_path / f"floor-{i}", 1000) for i in range(3))
    if render == "noop":
        record("4-fsyncs-per-node", fsyncs[0] / 1000, f"{fsyncs[0]:,} fsyncs for 1,000 renders")
        record("4-cold-run-floor", cold / floor, f"cold {cold:.2f} s, floor {floor:.2f} s (wall)")
    times = [reconcile_once(root, {}, True) for _ in range(3)]
    total, (summary, rerun_engine) = min(times, key=lambda t: t[0])
    assert summary.rendered == [] and summary.skipped == []
    gateway = "n00_000"
    project = open_project(root)
    project.backend.put_value(f"external.{gateway}", {"data": {"changed": True}})
    one, (summary, _) = reconcile_once(
        root, {gateway: Wake(source="external", refs=frozenset({"sha256:" + "1" * 64}))}, False
    )
    assert gateway in summary.rendered
    print(
        f"\n[bench] 1000-node DAG, {render} render: cold {cold:.2f}s "
        f"(reconcile {cold_engine:.2f}s); unchanged re-run {total:.3f}s "
        f"(reconcile {rerun_engine:.3f}s); one-source change {one:.3f}s, "
        f"{len(summary.rendered)} rendered, {len(summary.skipped)} skipped"
    )


def big_document(target_mb: int = 50) -> bytes:
    rng = random.Random(7)
    items = []
    size = 0
    i = 0
    while size < target_mb * 1_000_000:
        item = {
            "id": f"evt-{i:07d}",
            "kind": rng.choice(["funding", "hiring", "launch"]),
            "amount": round(rng.uniform(1, 1e6), 2),
            "score": rng.choice([0.5, 1.0, 2.0, 0.25]),
            "count": rng.randint(0, 10**6),
            "tags": rng.sample(["a", "b", "c", "d", "e", "f"], 3),
            "title": f'Event number {i} with some words, and a quote " in it',
            "source": {"url": f"https://example.com/{i}", "fetched_at": "2026-01-01T00:00:00Z"},
            "fetched_at": "2026-01-01T00:00:00Z",
            "ok": i % 2 == 0,
            "note": None,
        }
        items.append(item)
        size += len(json.dumps(item)) + 1
        i += 1
    return json.dumps({"items": items, "fetched_at": "2026-01-01"}).encode()


def test_fingerprint_fifty_megabytes() -> None:
    """Fingerprinting 50 MB of JSON (strict parse, reduce, canonical JSON, SHA-256)
    against `json.loads` of the same bytes, both in CPU time (single-threaded; the
    machine may be shared)."""
    data = big_document()
    files = {"events.json": data}
    spec = CanonicalizerSpec.from_json(
        {
            "rules": [
                {"path": "events.fetched_at", "material": False},
                {"path": "events.items.fetched_at", "material": False},
                {"path": "events.items.source.fetched_at", "material": False},
            ],
            "facets": [{"facet": "kinds", "paths": ["events.items.kind"]}],
        }
    )

    def pipeline(facets: list[str]) -> dict[str, str]:
        return fingerprint(spec, build_truth(files).value, facets, finite=True)

    loads, pipe, faceted, raw = [], [], [], []
    for _ in range(3):
        gc.collect()
        start = time.process_time()
        value = json.loads(data)
        loads.append(time.process_time() - start)
        start = time.process_time()
        canonical_json(value)
        raw.append(time.process_time() - start)
        del value
        gc.collect()
        start = time.process_time()
        tokens = pipeline(["@atomic"])
        pipe.append(time.process_time() - start)
        gc.collect()
        start = time.process_time()
        pipeline(["@atomic", "kinds"])
        faceted.append(time.process_time() - start)
    reduced = reduce(spec, build_truth(files).value)
    assert tokens["@atomic"] == token(reduced)
    assert "fetched_at" not in reduced["events"]["items"][0]
    base = min(loads)
    record("5-fingerprint", min(pipe) / base, f"{len(data) / 1e6:.0f} MB, CPU time, best of 3")
    print(
        f"\n[bench] {len(data) / 1e6:.1f} MB JSON: json.loads {base:.2f}s; "
        f"parse+reduce+canonical+hash {min(pipe):.2f}s = {min(pipe) / base:.2f}x json.loads; "
        f"with a facet {min(faceted):.2f}s = {min(faceted) / base:.2f}x; "
        f"canonical_json alone {min(raw):.2f}s = {min(raw) / base:.2f}x"
    )
