"""Check a compiled intent: its schema, then every semantic rule, each problem with its
JSON path. One implementation, two faces (jsonschema's `iter_errors` / `validate`):
`iter_problems` yields every problem (`prosec validate`, `prosec activate`, the build's
own check), `check` raises the first (`prosec run`).

The rules: edges reference nodes and never loop on one node, producer facets cover edge
facets, entry points are exactly the external nodes, `acyclic` is honest (the cycle is
named), one canonicalizer and one postcondition per node whose inline spec and validator
are well-formed, node and caller-input names are safe path segments, the frozen
fingerprints match, no error diagnostic, nothing retired from the judge era. Documents
of any shape are checked without raising: what the schema rejects is skipped here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any

from .canonicalizer import SpecError, parse_spec
from .fsio import PathEscapeError, safe_name
from .graphs import find_cycle
from .problems import Problem
from .protocol import WakeSource

__all__ = ["RETIRED_FIELDS", "RETIRED_KINDS", "IntentError", "check", "iter_problems"]

SCHEMA = "compiled-intent.schema.json"
# judge-era and retired vocabulary that must not appear on the envelope's own objects
RETIRED_FIELDS = frozenset({"activations", "criteria", "verdict", "verdicts", "judge", "pressure"})
RETIRED_KINDS = frozenset({"system", "service"})


class IntentError(ValueError):
    """A compiled intent the runtime cannot execute; the message names file and JSON path,
    and `problem` is the first problem found (None when the file could not be read)."""

    def __init__(self, message: str, problem: Problem | None = None) -> None:
        super().__init__(message)
        self.problem = problem


def iter_problems(
    document: Any, *, schema: bool = True, specs_known: Collection[str] = frozenset()
) -> Iterator[Problem]:
    """Every schema and semantic problem of a compiled intent, schema problems first.

    The schema pass checks the document against compiled-intent.schema.json and each
    validator's truth `schema` against the draft 2020-12 meta-schema; `schema=False`
    skips it for bytes already known to pass it. The semantic rules always run, except
    that the canonicalizer spec of a node in `specs_known` (one the caller knows parses:
    the build's own output for an unchanged contract) is not parsed again.
    """
    if schema:  # jsonschema loads only here: the build's own check never needs it
        from .schemas import validate

        yield from validate(document, SCHEMA)
        yield from _validator_schemas(document)
    if not isinstance(document, Mapping):
        return
    yield from sorted(set(_retired(document)))
    view = _View(document, specs_known)
    for rule in RULES:
        yield from rule(view)


def check(document: Any, where: str = "compiled intent", *, schema: bool = True) -> None:
    """Raise IntentError carrying the first problem of the document, if any."""
    for problem in iter_problems(document, schema=schema):
        raise IntentError(f"{where}: {problem}", problem)


def _validator_schemas(document: Any) -> Iterator[Problem]:
    """A validator's `schema` is what the runtime checks a node's truth with at commit."""
    for i, entry in _objects(_get(document, "postconditions")):
        validator = entry.get("validator")
        if isinstance(validator, Mapping) and "schema" in validator:
            from .schemas import check_schema

            problem = check_schema(validator["schema"])
            if problem:
                where = f"$.postconditions[{i}].validator.schema"
                yield Problem(where, f"not a JSON Schema: {problem}")


# ---------------------------------------------------------------------------------------
# Reading a document of unknown shape
# ---------------------------------------------------------------------------------------


def _get(value: Any, *keys: str) -> Any:
    for name in keys:
        value = value.get(name) if isinstance(value, Mapping) else None
    return value


def _objects(value: Any) -> list[tuple[int, Mapping[str, Any]]]:
    """The (index, object) items of a list; anything else has none."""
    return (
        [(i, v) for i, v in enumerate(value) if type(v) is dict or isinstance(v, Mapping)]
        if isinstance(value, list)
        else []
    )


def _name(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class _View:
    """The parts of a document the rules share, read once."""

    def __init__(
        self, document: Mapping[str, Any], specs_known: Collection[str] = frozenset()
    ) -> None:
        self.document = document
        self.specs_known = specs_known
        self.topology = _get(document, "topology")
        self.nodes = _objects(_get(document, "topology", "nodes"))
        self.edges = _objects(_get(document, "topology", "edges"))
        self.known: dict[str, Mapping[str, Any]] = {
            name: node for _, node in self.nodes if (name := _name(node.get("node"))) is not None
        }


def _retired(document: Mapping[str, Any]) -> Iterator[Problem]:
    """Judge-era fields on the envelope's own objects (not inside user-named content
    such as a validator's schema, where `verdict` may be a field of the truth)."""
    # (path prefix, [(index or None, object)]): a path is spelled only for a problem
    groups: list[tuple[str, list[tuple[int | None, Any]]]] = [
        ("$", [(None, document)]),
        ("$.topology", [(None, document.get("topology"))]),
    ]
    for key in ("nodes", "edges"):
        groups.append((f"$.topology.{key}", [*_objects(_get(document, "topology", key))]))
    for key in ("sources", "canonicalizers", "postconditions", "diagnostics"):
        groups.append((f"$.{key}", [*_objects(document.get(key))]))
    for prefix, items in groups:
        for i, value in items:
            if not isinstance(value, Mapping):
                continue
            where = prefix if i is None else f"{prefix}[{i}]"
            if not RETIRED_FIELDS.isdisjoint(value):
                for name in value:
                    if name in RETIRED_FIELDS:
                        yield Problem(f"{where}.{name}", f"judge-era field `{name}` is retired")
            if prefix == "$.sources" and value.get("kind") in RETIRED_KINDS:
                yield Problem(
                    f"{where}.kind",
                    f"kind `{value['kind']}` is retired (no `system` or `service` kind)",
                )


# ---------------------------------------------------------------------------------------
# The semantic rules, in reporting order
# ---------------------------------------------------------------------------------------


def _nodes(view: _View) -> Iterator[Problem]:
    counts = Counter(name for _, n in view.nodes if (name := _name(n.get("node"))) is not None)
    for name, count in counts.items():
        if count > 1:
            yield Problem("$.topology.nodes", f"node `{name}` appears {count} times")
    for i, node in view.nodes:
        name = _name(node.get("node"))
        if name is not None:
            yield from _safe(f"$.topology.nodes[{i}].node", name, "node name")
        for j, item in _objects(node.get("caller_inputs")):
            value = _name(item.get("name"))
            if value is not None:
                where = f"$.topology.nodes[{i}].caller_inputs[{j}].name"
                yield from _safe(where, value, "caller input")


def _safe(where: str, name: str, what: str) -> Iterator[Problem]:
    """Node and caller-input names become directory and file names at run time."""
    try:
        safe_name(name, what)
    except PathEscapeError as exc:
        yield Problem(where, str(exc))


def _edges(view: _View) -> Iterator[Problem]:
    facets = {
        name: c.get("facets")
        for _, c in _objects(view.document.get("canonicalizers"))
        if (name := _name(c.get("node"))) is not None
    }
    for i, edge in view.edges:
        where = f"$.topology.edges[{i}]"
        for end in ("subscriber", "producer"):
            if _name(edge.get(end)) not in view.known:
                yield Problem(f"{where}.{end}", f"`{edge.get(end)}` is not a topology node")
        if edge.get("subscriber") == edge.get("producer"):
            yield Problem(where, "a node never subscribes to itself (that is self continuity)")
        producer = _name(edge.get("producer"))
        emitted = facets.get(producer) if producer is not None else None
        if isinstance(emitted, list) and edge.get("facet") not in emitted:
            yield Problem(
                f"{where}.facet",
                f"producer `{producer}` emits no facet `{edge.get('facet')}` "
                f"(its canonicalizer lists {emitted})",
            )


def _entry_points(view: _View) -> Iterator[Problem]:
    entries = _get(view.topology, "entry_points")
    entries = entries if isinstance(entries, list) else []
    for i, value in enumerate(entries):
        name = _name(value)
        node = view.known.get(name) if name is not None else None
        if node is None:
            yield Problem(f"$.topology.entry_points[{i}]", f"`{value}` is not a topology node")
        elif node.get("wake_source") != WakeSource.EXTERNAL:
            yield Problem(f"$.topology.entry_points[{i}]", f"`{name}` is not external-driven")
    for name, node in view.known.items():
        if node.get("wake_source") == WakeSource.EXTERNAL and name not in entries:
            yield Problem(
                "$.topology.entry_points", f"external node `{name}` is not an entry point"
            )


def _acyclic(view: _View) -> Iterator[Problem]:
    """A self-subscription is reported by `_edges`, so it is no cycle here."""
    pairs = [(_name(e.get("producer")), _name(e.get("subscriber"))) for _, e in view.edges]
    edges = [(p, s) for p, s in pairs if p is not None and s is not None and p != s]
    cycle = find_cycle(view.known, edges)
    declared = _get(view.topology, "acyclic")
    if cycle:
        path = " → ".join(f"`{name}`" for name in cycle)
        if declared is True:
            yield Problem(
                "$.topology.acyclic", f"`acyclic` is true but the graph has a cycle {path}"
            )
        else:
            yield Problem("$.topology.acyclic", f"a cyclic topology must not be written ({path})")
    elif declared is False:
        yield Problem("$.topology.acyclic", "`acyclic` is false but the graph has no cycle")


def _per_node(view: _View) -> Iterator[Problem]:
    for section in ("canonicalizers", "postconditions"):
        entries = _objects(view.document.get(section))
        counts = Counter(_name(e.get("node")) for _, e in entries)
        for i, entry in entries:
            if _name(entry.get("node")) not in view.known:
                yield Problem(
                    f"$.{section}[{i}].node", f"`{entry.get('node')}` is not a topology node"
                )
        for name in view.known:
            if counts[name] != 1:
                yield Problem(f"$.{section}", f"node `{name}` has {counts[name]} entries, not one")
        for i, entry in entries:
            if section == "canonicalizers":
                known = _name(entry.get("node")) in view.specs_known
                yield from _canonicalizer(f"$.{section}[{i}]", entry, parse=not known)
            else:
                yield from _postcondition(f"$.{section}[{i}]", entry)


def _canonicalizer(where: str, entry: Mapping[str, Any], parse: bool = True) -> Iterator[Problem]:
    if "spec" not in entry:
        return
    try:
        if parse:
            parse_spec(entry["spec"])
        elif not isinstance(entry["spec"], Mapping):
            raise SpecError("a canonicalizer spec must be an object")
    except SpecError as exc:
        yield Problem(f"{where}.spec", str(exc))
        return
    facets = entry.get("facets")
    listed: list[Any] = facets if isinstance(facets, list) else []
    for j, facet in _objects(entry["spec"].get("facets")):
        if facet.get("facet") not in listed:
            yield Problem(
                f"{where}.spec.facets[{j}]", f"facet `{facet.get('facet')}` is not in `facets`"
            )


def _postcondition(where: str, entry: Mapping[str, Any]) -> Iterator[Problem]:
    validator = entry.get("validator")
    if not isinstance(validator, Mapping):
        return
    if validator.get("mode") != entry.get("mode"):
        yield Problem(f"{where}.validator.mode", "differs from the entry's `mode`")
    attested = _objects(validator.get("attested"))
    expected = "render-attested" if attested else "deterministic"
    if validator.get("mode") != expected:
        yield Problem(f"{where}.validator.mode", f"must be `{expected}` for these attestations")
    predicates = _objects(validator.get("predicates"))
    ids = [name for _, p in [*predicates, *attested] if (name := _name(p.get("id"))) is not None]
    for ident, count in Counter(ids).items():
        if count > 1:
            yield Problem(f"{where}.validator", f"id `{ident}` is used {count} times")


def _fingerprints(view: _View) -> Iterator[Problem]:
    frozen = view.document.get("contract_fingerprints")
    if not isinstance(frozen, Mapping):
        return
    for name, node in view.known.items():
        if name not in frozen:
            yield Problem("$.contract_fingerprints", f"no fingerprint for node `{name}`")
        elif frozen[name] != node.get("contract_fingerprint"):
            yield Problem(
                f"$.contract_fingerprints.{name}", "differs from the node's contract_fingerprint"
            )
    for name in frozen:
        if name not in view.known:
            yield Problem(f"$.contract_fingerprints.{name}", f"`{name}` is not a topology node")


def _diagnostics(view: _View) -> Iterator[Problem]:
    paths = {
        path
        for _, s in _objects(view.document.get("sources"))
        if (path := _name(s.get("path"))) is not None
    }
    for i, record in _objects(view.document.get("diagnostics")):
        if record.get("severity") == "error":
            yield Problem(
                f"$.diagnostics[{i}]", "an error diagnostic: such a manifest must not be written"
            )
        if "sourcePath" in record and _name(record["sourcePath"]) not in paths:
            yield Problem(
                f"$.diagnostics[{i}].sourcePath", f"`{record['sourcePath']}` is not a listed source"
            )


RULES: tuple[Callable[[_View], Iterator[Problem]], ...] = (
    _nodes,
    _edges,
    _entry_points,
    _acyclic,
    _per_node,
    _fingerprints,
    _diagnostics,
)
