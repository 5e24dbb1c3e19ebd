"""Load the compiled intent (dist/manifest.active.json) into a frozen, checked run plan view.

The envelope is the upstream compile-phase IR v2 plus prosec's inline canonicalizer
`spec` and postcondition `validator`. Topology nodes may also carry optional fields the
runtime reads: `cadence` (an ISO 8601 duration such as "PT6H" for self-driven nodes),
`caller_inputs` ([{name, type: text|run|run[]}]) and `render` (a render binding, same
keys as a `[render.<node>]` table of prose.toml).
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .canonicalizer import ATOMIC, CanonicalizerSpec, SpecError
from .fsio import PathEscapeError, safe_name
from .schemas import check_schema, load_schema, validate

__all__ = ["CallerInput", "Edge", "Intent", "IntentError", "NodeIntent", "load_intent"]


class IntentError(ValueError):
    """A compiled intent the runtime cannot execute; the message names file and JSON path."""


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
    wake_source: str
    facets: tuple[str, ...]
    spec: CanonicalizerSpec
    validator: Mapping[str, Any] | None
    cadence: str | None = None
    caller_inputs: tuple[CallerInput, ...] = ()
    render: Mapping[str, Any] | None = None


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
    semantic checks always run.
    """
    try:
        data = path.read_bytes()
        raw = json.loads(data)
    except FileNotFoundError as exc:
        raise IntentError(
            f"{path}: no compiled intent; run `prosec build` and `prosec activate` first"
        ) from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IntentError(f"{path}: not JSON: {exc}") from exc
    if cache is not None and intent_marker(cache, data).exists():
        return parse_intent(raw, str(path), schema_checked=True)
    return parse_intent(raw, str(path))


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
    """Check a compiled intent document and build its indexes."""
    findings = [] if schema_checked else validate(raw, "compiled-intent.schema.json")
    if findings:
        shown = "; ".join(str(f) for f in findings[:5])
        raise IntentError(f"{where}: does not match the compiled-intent schema: {shown}")
    topology = raw["topology"]
    canonicalizers = _by_node(raw["canonicalizers"], "canonicalizers", where)
    postconditions = _by_node(raw["postconditions"], "postconditions", where)
    nodes: dict[str, NodeIntent] = {}
    for index, entry in enumerate(topology["nodes"]):
        name = entry["node"]
        at = f"{where}: topology.nodes[{index}]"
        try:
            safe_name(name, "node name")
        except PathEscapeError as exc:
            raise IntentError(f"{at}: {exc}") from exc
        if name in nodes:
            raise IntentError(f"{at}: node {name!r} is listed twice")
        canon = canonicalizers.get(name)
        if canon is None:
            raise IntentError(f"{where}: node {name!r} has no canonicalizer entry")
        try:
            spec = CanonicalizerSpec.from_json(canon.get("spec", {}))
        except SpecError as exc:
            raise IntentError(f"{where}: canonicalizer of {name!r}: {exc}") from exc
        post = postconditions.get(name)
        validator = post.get("validator") if post else None
        if validator is not None and "schema" in validator:
            problem = check_schema(validator["schema"])
            if problem:
                raise IntentError(f"{where}: validator schema of {name!r}: {problem}")
        fingerprint = raw["contract_fingerprints"].get(name, entry["contract_fingerprint"])
        if fingerprint != entry["contract_fingerprint"]:
            raise IntentError(f"{at}: contract_fingerprint differs from contract_fingerprints")
        inputs = tuple(
            CallerInput(name=safe_name(item["name"], "caller input"), type=item.get("type", "text"))
            for item in entry.get("caller_inputs", [])
        )
        nodes[name] = NodeIntent(
            name=name,
            contract_fingerprint=entry["contract_fingerprint"],
            wake_source=entry["wake_source"],
            facets=tuple(dict.fromkeys([ATOMIC, *canon["facets"]])),
            spec=spec,
            validator=validator,
            cadence=entry.get("cadence"),
            caller_inputs=inputs,
            render=entry.get("render"),
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
    for edge in edges:
        for role in ("subscriber", "producer"):
            if getattr(edge, role) not in nodes:
                raise IntentError(f"{where}: edge {edge} names unknown {role}")
        if edge.facet not in nodes[edge.producer].facets:
            raise IntentError(
                f"{where}: edge {edge.subscriber} → {edge.producer}.{edge.facet}: "
                f"{edge.producer} emits no facet {edge.facet!r}"
            )
        if edge.subscriber == edge.producer:
            raise IntentError(f"{where}: node {edge.producer!r} subscribes to itself")
    for entry_point in topology["entry_points"]:
        if entry_point not in nodes:
            raise IntentError(f"{where}: entry point {entry_point!r} is not a node")
    order = _toposort(nodes, edges, where)
    return _indexed(raw, nodes, order, edges, tuple(topology["entry_points"]))


def _by_node(items: list[dict[str, Any]], what: str, where: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        if item["node"] in out:
            raise IntentError(f"{where}: {what} lists node {item['node']!r} twice")
        out[item["node"]] = item
    return out


def _toposort(
    nodes: Mapping[str, NodeIntent], edges: tuple[Edge, ...], where: str
) -> tuple[str, ...]:
    indegree = {name: 0 for name in nodes}
    children: dict[str, set[str]] = {name: set() for name in nodes}
    for edge in edges:
        if edge.subscriber not in children[edge.producer]:
            children[edge.producer].add(edge.subscriber)
            indegree[edge.subscriber] += 1
    ready = sorted(name for name, count in indegree.items() if count == 0)
    order: list[str] = []
    heapq.heapify(ready)
    while ready:
        name = heapq.heappop(ready)
        order.append(name)
        for child in children[name]:
            indegree[child] -= 1
            if indegree[child] == 0:
                heapq.heappush(ready, child)
    if len(order) != len(nodes):
        stuck = sorted(name for name, count in indegree.items() if count > 0)
        raise IntentError(f"{where}: the topology has a cycle through {', '.join(stuck)}")
    return tuple(order)


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
