"""Load the compiled intent (dist/manifest.active.json) into a frozen, checked run plan view.

The envelope is the upstream compile-phase IR v2 plus prosec's inline canonicalizer
`spec` and postcondition `validator`. Topology nodes may also carry optional fields the
runtime reads: `cadence` (an ISO 8601 duration such as "PT6H" for self-driven nodes),
`caller_inputs` ([{name, type: text|run|run[]}]), `render` (a render binding, same
keys as a `[render.<node>]` table of prose.toml) and `runtime` (`### Runtime` hints:
`persist`, `path`, `model`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .canonicalizer import ATOMIC, CanonicalizerSpec, parse_spec
from .graphs import topological_order
from .intent_check import IntentError, check
from .problems import Problem
from .protocol import WakeSource
from .schemas import load_schema
from .userjson import JSONInputError, loads, read_limited

__all__ = ["CallerInput", "Edge", "Intent", "IntentError", "NodeIntent", "load_intent"]

MANIFEST_LIMIT = 256 << 20  # bytes of a compiled intent


@dataclass(frozen=True, slots=True, kw_only=True)
class CallerInput:
    """An input a caller binds with `--input name=value` (type text, run or run[])."""

    name: str
    type: str = "text"


@dataclass(frozen=True, slots=True, kw_only=True)
class Edge:
    """One subscription: `subscriber` requires `facet` of `producer`."""

    subscriber: str
    producer: str
    facet: str


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeIntent:
    """Everything the runtime knows about one node."""

    name: str
    contract_fingerprint: str
    wake_source: WakeSource
    facets: tuple[str, ...]
    spec: CanonicalizerSpec
    validator: Mapping[str, Any] | None
    cadence: str | None = None
    caller_inputs: tuple[CallerInput, ...] = ()
    render: Mapping[str, Any] | None = None
    runtime: Mapping[str, Any] | None = None  # `### Runtime`: persist, path, model


@dataclass(frozen=True, slots=True, kw_only=True)
class Intent:
    """A checked compiled intent with the derived indexes the reconciler needs."""

    raw: Mapping[str, Any]
    nodes: Mapping[str, NodeIntent]
    order: tuple[str, ...]  # a topological order, ties broken by name
    edges: tuple[Edge, ...]
    entry_points: tuple[str, ...]
    inputs_of: Mapping[str, tuple[Edge, ...]] = field(default_factory=dict)
    subscribers_of: Mapping[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    index: Mapping[str, int] = field(default_factory=dict)
    ancestors: Mapping[str, int] = field(default_factory=dict)  # bitmask over `order`
    descendants: Mapping[str, int] = field(default_factory=dict)
    digest: str | None = None  # `sha256:` of the manifest file's bytes, when read from one

    def source_paths(self) -> list[str]:
        return [str(source["path"]) for source in self.raw.get("sources", [])]

    def caller_inputs(self) -> dict[str, CallerInput]:
        declared: dict[str, CallerInput] = {}
        for node in self.nodes.values():
            for item in node.caller_inputs:
                declared.setdefault(item.name, item)
        return declared


def load_intent(path: Path, cache: Path | None = None) -> Intent:
    """Read and check a compiled intent file; raise IntentError with a precise message.

    With `cache`, a marker named by the file's SHA-256 records that these exact bytes
    passed the schema once, so an unchanged manifest skips the (slow) schema pass; the
    semantic rules always run (`intent_check`, the same rules as `prosec validate`).
    """
    if not path.exists() and not path.is_symlink():
        raise IntentError(
            f"{path}: no compiled intent; run `prosec build` and `prosec activate` first"
        )
    try:
        data = read_limited(path, MANIFEST_LIMIT)
    except JSONInputError as exc:
        raise IntentError(str(exc)) from None
    try:
        raw = loads(data, source=str(path))
    except JSONInputError as exc:
        raise IntentError(str(exc), Problem("$", str(exc))) from None
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    checked = cache is not None and intent_marker(cache, data).exists()
    return dataclasses.replace(parse_intent(raw, str(path), schema_checked=checked), digest=digest)


def intent_marker(cache: Path, data: bytes) -> Path:
    """The cache marker saying these manifest bytes passed the schema."""
    digest = hashlib.sha256(data)
    digest.update(json.dumps(load_schema("compiled-intent.schema.json"), sort_keys=True).encode())
    return cache / f"intent-{digest.hexdigest()}.ok"


def remember_checked(path: Path, cache: Path) -> None:
    """Record that the manifest at `path` passed the schema (best effort)."""
    with contextlib.suppress(OSError):
        marker = intent_marker(cache, path.read_bytes())
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()


def parse_intent(
    raw: Any, where: str = "compiled intent", *, schema_checked: bool = False
) -> Intent:
    """Check a compiled intent document (IntentError on its first problem) and build
    its indexes."""
    check(raw, where, schema=not schema_checked)
    topology = raw["topology"]
    canonicalizers = {entry["node"]: entry for entry in raw["canonicalizers"]}
    postconditions = {entry["node"]: entry for entry in raw["postconditions"]}
    nodes: dict[str, NodeIntent] = {}
    for entry in topology["nodes"]:
        name = entry["node"]
        canon = canonicalizers[name]
        nodes[name] = NodeIntent(
            name=name,
            contract_fingerprint=entry["contract_fingerprint"],
            wake_source=WakeSource(entry["wake_source"]),
            facets=tuple(dict.fromkeys([ATOMIC, *canon["facets"]])),
            spec=parse_spec(canon.get("spec", {})),
            validator=postconditions[name].get("validator"),
            cadence=entry.get("cadence"),
            caller_inputs=tuple(
                CallerInput(name=item["name"], type=item.get("type", "text"))
                for item in entry.get("caller_inputs", [])
            ),
            render=entry.get("render"),
            runtime=entry.get("runtime"),
        )
    edges = tuple(
        sorted(
            {
                Edge(subscriber=e["subscriber"], producer=e["producer"], facet=e["facet"])
                for e in topology["edges"]
            },
            key=lambda e: (e.subscriber, e.producer, e.facet),
        )
    )
    order = topological_order(nodes, [(edge.producer, edge.subscriber) for edge in edges])
    return _indexed(raw, nodes, order, edges, tuple(topology["entry_points"]))


def _indexed(
    raw: Mapping[str, Any],
    nodes: dict[str, NodeIntent],
    order: tuple[str, ...],
    edges: tuple[Edge, ...],
    entry_points: tuple[str, ...],
) -> Intent:
    index = {name: position for position, name in enumerate(order)}
    inputs_of: dict[str, list[Edge]] = {name: [] for name in nodes}
    subscribers: dict[tuple[str, str], set[str]] = {}
    producers: dict[str, set[str]] = {name: set() for name in nodes}
    for edge in edges:
        inputs_of[edge.subscriber].append(edge)
        subscribers.setdefault((edge.producer, edge.facet), set()).add(edge.subscriber)
        producers[edge.subscriber].add(edge.producer)
    ancestors: dict[str, int] = {}
    for name in order:
        mask = 0
        for producer in producers[name]:
            mask |= ancestors[producer] | (1 << index[producer])
        ancestors[name] = mask
    descendants: dict[str, int] = {name: 0 for name in nodes}
    for name in reversed(order):
        for producer in producers[name]:
            descendants[producer] |= descendants[name] | (1 << index[name])
    return Intent(
        raw=raw,
        nodes=nodes,
        order=order,
        edges=edges,
        entry_points=entry_points,
        inputs_of={
            k: tuple(sorted(v, key=lambda e: (e.producer, e.facet))) for k, v in inputs_of.items()
        },
        subscribers_of={k: tuple(sorted(v)) for k, v in subscribers.items()},
        index=index,
        ancestors=ancestors,
        descendants=descendants,
    )
