"""Preparing a render: its workspace, its pinned inputs materialized in the run, and the
RenderRequest (`__inputs.json`, `__wake.json`) it reads; the check that a render left
those pinned copies as it found them. Split out of executor.py; the engine's methods
call these."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .fsio import atomic_write_bytes
from .keys import external_key
from .postconditions import ATTEST_FILE
from .protocol import RenderWake, WakeSource
from .reconciler import Wake
from .renders import RenderRequest
from .renders.process import new_attempt
from .runs import RunDir

if TYPE_CHECKING:
    from .executor import Engine, Job

__all__ = ["changed_inputs", "pinned_copy", "pinned_versions", "prepare_render"]


def pinned_copy(engine: Engine, run: RunDir, node: str) -> Path | None:
    """A node's current version materialized in the run (its pinned, read-only copy),
    verified against its content address (rebuilt if anything changed it)."""
    version = engine.version(node)
    if version is None:
        return None
    run.pin(node, version, functools.partial(engine.backend.get_version, node, version))
    return run.world_model(node)


def changed_inputs(engine: Engine, run: RunDir, job: Job) -> list[str]:
    """The pinned copies a render read that no longer match their version (a render
    wrote into them; they are rebuilt for the renders after it), or that were rebuilt
    since the render was prepared (it may have read the tampered bytes)."""
    changed = []
    for node, version in job.pinned:
        blob = functools.partial(engine.backend.get_version, node, version)
        if run.pin(node, version, blob):
            engine._repairs += 1
            engine._rebuilt[node] = engine._repairs
            changed.append(node)
        elif engine._rebuilt.get(node, 0) > job.seen:
            changed.append(node)
    return changed


def pinned_versions(engine: Engine, node: str) -> tuple[tuple[str, str], ...]:
    """The versions a render of `node` reads (its inputs' and its own prior), by name."""
    return tuple(
        (name, version)
        for name in sorted({edge.producer for edge in engine.intent.inputs_of[node]} | {node})
        if (version := engine.version(name)) is not None
    )


def prepare_render(
    engine: Engine, run: RunDir, node: str, wake: Wake
) -> tuple[RenderRequest, tuple[tuple[str, str], ...]]:
    spec = engine.intent.nodes[node]
    attempt = new_attempt()
    workspace = run.prepare_workspace(node, attempt)
    inputs: list[dict[str, Any]] = []
    for edge in engine.intent.inputs_of[node]:
        head = engine.heads[edge.producer]
        path = pinned_copy(engine, run, edge.producer)
        tokens = head.fingerprints(engine.intent.nodes[edge.producer].facets)
        inputs.append(
            {
                "producer": edge.producer,
                "facet": edge.facet,
                "token": tokens.get(edge.facet),
                "version": engine.version(edge.producer),
                "path": str(path) if path else None,
            }
        )
    caller = [
        {
            "name": item.name,
            "type": item.type,
            "path": str(run.path / "world-model" / "caller" / f"{item.name}.md"),
        }
        for item in sorted(spec.caller_inputs, key=lambda c: c.name)
    ]
    prior = pinned_copy(engine, run, node)
    wake_doc: RenderWake = {"source": wake.source, "refs": sorted(wake.refs)}
    if wake.source == WakeSource.EXTERNAL or node in engine.intent.entry_points:
        stored = engine.backend.get_value(external_key(node))
        if stored is not None and wake.source == WakeSource.EXTERNAL:
            wake_doc["data"] = stored["data"]
    inputs_file = workspace / "__inputs.json"
    wake_file = workspace / "__wake.json"
    atomic_write_bytes(
        inputs_file,
        json.dumps(
            {
                "run_id": run.run_id,
                "node": node,
                "inputs": inputs,
                "caller": caller,
                "prior": {
                    "version": engine.version(node),
                    "path": str(prior) if prior else None,
                },
                "wake": wake_doc,
            },
            indent=2,
            sort_keys=True,
        ).encode(),
        durable=False,  # render context, rebuilt for every render
    )
    wake_json = json.dumps(wake_doc, indent=2, sort_keys=True).encode()
    atomic_write_bytes(wake_file, wake_json, durable=False)
    contract = None
    for source in engine.intent.raw.get("sources", []):
        if source.get("name") == node:
            contract = run.source(str(source["path"]))
    attested = tuple(item["id"] for item in (spec.validator or {}).get("attested", []))
    pinned = pinned_versions(engine, node)
    request = RenderRequest(
        run_id=run.run_id,
        node=node,
        root=engine.root,
        run_dir=run.path,
        workspace=workspace,
        output=run.staging(node, attempt),
        inputs_file=inputs_file,
        wake_file=wake_file,
        attest_file=workspace / ATTEST_FILE,
        prior=prior,
        prior_version=engine.version(node),
        contract=contract,
        timeout=engine.options.timeout,
        wake=wake_doc,
        attested=attested,
        attempt=attempt,
        memory=engine._memory(run, node),
        model=(spec.runtime or {}).get("model"),
        default_model=engine.options.default_model,
    )
    return request, pinned
