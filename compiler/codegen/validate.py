"""Validate any compiled intent: the schema, then the semantic rules; every problem with
its JSON path (prosec's own manifests and upstream ones without the inline extensions)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from . import schemas

# judge-era and retired vocabulary that must not appear anywhere in a compiled intent
RETIRED_FIELDS = frozenset({"activations", "criteria", "verdict", "verdicts", "judge", "pressure"})
RETIRED_KINDS = frozenset({"system", "service"})


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    """One violation: where (a JSON path such as `$.topology.edges[2].producer`) and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def validate(document: Any) -> list[Problem]:
    """Every schema and semantic problem of a compiled intent (empty when valid)."""
    found = [
        Problem(path, message) for path, message in schemas.problems("compiled-intent", document)
    ]
    if isinstance(document, Mapping):
        found.extend(sorted(set(_retired(document, "$"))))
        found.extend(_semantic(document))
    return found


def _retired(document: Mapping[str, Any], path: str) -> Iterator[Problem]:
    """Judge-era fields on the envelope's own objects (not inside user-named content
    such as a validator's schema, where `verdict` may be a field of the truth)."""
    topology = document.get("topology")
    objects: list[tuple[str, Any]] = [(path, document), (f"{path}.topology", topology)]
    if isinstance(topology, Mapping):
        for key in ("nodes", "edges"):
            objects += [
                (f"{path}.topology.{key}[{i}]", v) for i, v in _list(document, "topology", key)
            ]
    for key in ("sources", "canonicalizers", "postconditions", "diagnostics"):
        objects += [(f"{path}.{key}[{i}]", v) for i, v in _list(document, key)]
    for where, value in objects:
        if not isinstance(value, Mapping):
            continue
        for name in value:
            if name in RETIRED_FIELDS:
                yield Problem(f"{where}.{name}", f"judge-era field `{name}` is retired")
        if where.startswith(f"{path}.sources[") and value.get("kind") in RETIRED_KINDS:
            yield Problem(
                f"{where}.kind",
                f"kind `{value['kind']}` is retired (no `system` or `service` kind)",
            )


def _list(document: Mapping[str, Any], *keys: str) -> list[tuple[int, Mapping[str, Any]]]:
    value: Any = document
    for name in keys:
        value = value.get(name) if isinstance(value, Mapping) else None
    return (
        [(i, v) for i, v in enumerate(value) if isinstance(v, Mapping)]
        if isinstance(value, list)
        else []
    )


def _semantic(document: Mapping[str, Any]) -> list[Problem]:
    found: list[Problem] = []
    nodes = _list(document, "topology", "nodes")
    names = [n.get("node") for _, n in nodes]
    for name, count in Counter(names).items():
        if count > 1:
            found.append(Problem("$.topology.nodes", f"node `{name}` appears {count} times"))
    known = {n.get("node"): n for _, n in nodes}
    found += _edges(document, known)
    found += _entry_points(document, known)
    found += _acyclic(document, known)
    found += _per_node(document, known)
    found += _fingerprints(document, known)
    found += _diagnostics(document)
    return found


def _edges(document: Mapping[str, Any], known: Mapping[Any, Any]) -> Iterator[Problem]:
    facets = {c.get("node"): c.get("facets") for _, c in _list(document, "canonicalizers")}
    for i, edge in _list(document, "topology", "edges"):
        where = f"$.topology.edges[{i}]"
        for end in ("subscriber", "producer"):
            if edge.get(end) not in known:
                yield Problem(f"{where}.{end}", f"`{edge.get(end)}` is not a topology node")
        if edge.get("subscriber") == edge.get("producer"):
            yield Problem(where, "a node never subscribes to itself (that is self continuity)")
        emitted = facets.get(edge.get("producer"))
        if isinstance(emitted, list) and edge.get("facet") not in emitted:
            yield Problem(
                f"{where}.facet",
                f"producer `{edge.get('producer')}` emits no facet `{edge.get('facet')}` "
                f"(its canonicalizer lists {emitted})",
            )


def _entry_points(document: Mapping[str, Any], known: Mapping[Any, Any]) -> Iterator[Problem]:
    topology = document.get("topology")
    entries = topology.get("entry_points") if isinstance(topology, Mapping) else None
    entries = entries if isinstance(entries, list) else []
    for i, name in enumerate(entries):
        node = known.get(name)
        if node is None:
            yield Problem(f"$.topology.entry_points[{i}]", f"`{name}` is not a topology node")
        elif node.get("wake_source") != "external":
            yield Problem(f"$.topology.entry_points[{i}]", f"`{name}` is not external-driven")
    for name, node in known.items():
        if node.get("wake_source") == "external" and name not in entries:
            yield Problem(
                "$.topology.entry_points", f"external node `{name}` is not an entry point"
            )


def _acyclic(document: Mapping[str, Any], known: Mapping[Any, Any]) -> Iterator[Problem]:
    topology = document.get("topology")
    if not isinstance(topology, Mapping) or not isinstance(topology.get("acyclic"), bool):
        return
    edges = [
        (e.get("producer"), e.get("subscriber")) for _, e in _list(document, "topology", "edges")
    ]
    cyclic = _has_cycle(list(known), edges)
    if cyclic and not topology["acyclic"]:
        yield Problem("$.topology.acyclic", "a cyclic topology must not be written")
    if topology["acyclic"] == cyclic:
        actual = "has a cycle" if cyclic else "has no cycle"
        yield Problem(
            "$.topology.acyclic", f"`acyclic` is {topology['acyclic']} but the graph {actual}"
        )


def _has_cycle(nodes: list[Any], edges: list[tuple[Any, Any]]) -> bool:
    """Kahn's algorithm: a cycle remains when some node never reaches in-degree zero."""
    indegree = {n: 0 for n in nodes}
    children: dict[Any, list[Any]] = {n: [] for n in nodes}
    for producer, subscriber in edges:
        if producer in indegree and subscriber in indegree:
            children[producer].append(subscriber)
            indegree[subscriber] += 1
    ready = [n for n, degree in indegree.items() if degree == 0]
    seen = 0
    while ready:
        node = ready.pop()
        seen += 1
        for child in children[node]:
            indegree[child] -= 1
            if indegree[child] == 0:
                ready.append(child)
    return seen < len(indegree)


def _per_node(document: Mapping[str, Any], known: Mapping[Any, Any]) -> Iterator[Problem]:
    for section in ("canonicalizers", "postconditions"):
        entries = _list(document, section)
        counts = Counter(e.get("node") for _, e in entries)
        for i, entry in entries:
            if entry.get("node") not in known:
                yield Problem(
                    f"$.{section}[{i}].node", f"`{entry.get('node')}` is not a topology node"
                )
        for name in known:
            if counts[name] != 1:
                yield Problem(f"$.{section}", f"node `{name}` has {counts[name]} entries, not one")
        for i, entry in entries:
            yield from _inline(section, i, entry)


def _inline(section: str, index: int, entry: Mapping[str, Any]) -> Iterator[Problem]:
    where = f"$.{section}[{index}]"
    if section == "canonicalizers" and isinstance(entry.get("spec"), Mapping):
        facets = entry.get("facets")
        listed: list[Any] = facets if isinstance(facets, list) else []
        for j, facet in enumerate(entry["spec"].get("facets", [])):
            if isinstance(facet, Mapping) and facet.get("facet") not in listed:
                yield Problem(
                    f"{where}.spec.facets[{j}]", f"facet `{facet.get('facet')}` is not in `facets`"
                )
    if section == "postconditions" and isinstance(entry.get("validator"), Mapping):
        validator = entry["validator"]
        if validator.get("mode") != entry.get("mode"):
            yield Problem(f"{where}.validator.mode", "differs from the entry's `mode`")
        attested = validator.get("attested", [])
        expected = "render-attested" if attested else "deterministic"
        if validator.get("mode") != expected:
            yield Problem(f"{where}.validator.mode", f"must be `{expected}` for these attestations")
        ids = [
            p.get("id")
            for p in [*validator.get("predicates", []), *attested]
            if isinstance(p, Mapping)
        ]
        for ident, count in Counter(ids).items():
            if count > 1:
                yield Problem(f"{where}.validator", f"id `{ident}` is used {count} times")


def _fingerprints(document: Mapping[str, Any], known: Mapping[Any, Any]) -> Iterator[Problem]:
    frozen = document.get("contract_fingerprints")
    if not isinstance(frozen, Mapping):
        return
    for name, node in known.items():
        if name not in frozen:
            yield Problem("$.contract_fingerprints", f"no fingerprint for node `{name}`")
        elif frozen[name] != node.get("contract_fingerprint"):
            yield Problem(
                f"$.contract_fingerprints.{name}", "differs from the node's contract_fingerprint"
            )
    for name in frozen:
        if name not in known:
            yield Problem(f"$.contract_fingerprints.{name}", f"`{name}` is not a topology node")


def _diagnostics(document: Mapping[str, Any]) -> Iterator[Problem]:
    paths = {s.get("path") for _, s in _list(document, "sources")}
    for i, record in _list(document, "diagnostics"):
        if record.get("severity") == "error":
            yield Problem(
                f"$.diagnostics[{i}]", "an error diagnostic: such a manifest must not be written"
            )
        if "sourcePath" in record and record["sourcePath"] not in paths:
            yield Problem(
                f"$.diagnostics[{i}].sourcePath", f"`{record['sourcePath']}` is not a listed source"
            )
