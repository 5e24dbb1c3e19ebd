"""IR → the compiled intent (owns its JSON shape, its byte form and artifact locators)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from ..diagnostics import Diagnostic
from ..ir import KINDS, Project, Resolution, Topology
from ..lowered import CanonicalizerSpec, Validator
from ..runtime_hints import RuntimeHints
from ..runtime_hints import lower as runtime_hints

KIND = "openprose.compile-phase-ir"
VERSION = 2
DIST = "dist"


def artifact(kind: str, node: str) -> str:
    """`dist/canonicalizers/<node>.json` or `dist/postconditions/<node>.json`."""
    return f"{DIST}/{kind}/{node}.json"


def emit(
    project: Project,
    topology: Topology,
    specs: Mapping[str, CanonicalizerSpec],
    validators: Mapping[str, Validator],
    fingerprints: Mapping[str, str],
    diagnostics: Sequence[Diagnostic],
) -> dict[str, Any]:
    """The compiled intent document: upstream IR v2 plus prosec's inline extensions."""
    names = [node.name for node in topology.nodes]
    by_subscriber: dict[str, list[Resolution]] = {}  # in resolution order, grouped once
    for resolution in topology.resolutions:
        by_subscriber.setdefault(resolution.subscriber, []).append(resolution)
    return {
        "kind": KIND,
        "version": VERSION,
        "sources": sources(project),
        "topology": {
            "nodes": [
                _node(
                    node.name,
                    node.wake_source.value,
                    node.cadence,
                    runtime_hints(node.contract),
                    fingerprints,
                    by_subscriber.get(node.name, ()),
                )
                for node in topology.nodes
            ],
            "edges": [
                {"subscriber": e.subscriber, "producer": e.producer, "facet": e.facet}
                for e in topology.edges
            ],
            "entry_points": sorted(topology.entry_points),
            "acyclic": topology.acyclic,
        },
        "canonicalizers": [
            {
                "node": name,
                "artifact": artifact("canonicalizers", name),
                "facets": list(specs[name].facet_names),
                "spec": specs[name].to_json(),
            }
            for name in names
        ],
        "postconditions": [
            {
                "node": name,
                "artifact": artifact("postconditions", name),
                "mode": validators[name].mode,
                "validator": validators[name].to_json(),
            }
            for name in names
        ],
        "contract_fingerprints": {name: fingerprints[name] for name in names},
        "diagnostics": diagnostic_records(diagnostics, {s["path"] for s in sources(project)}),
    }


def sources(project: Project) -> list[dict[str, Any]]:
    records = []
    for source in sorted(project.files, key=lambda f: f.path):
        head = next((c for c in source.contracts if not c.inline), None)
        record: dict[str, Any] = {"path": source.path, "kind": "unknown"}
        if head is not None:
            record["kind"] = head.kind if head.kind in KINDS else "unknown"
            name = head.frontmatter.get("name")
            if isinstance(name, str) and name.strip():
                record["name"] = name.strip()
        records.append(record)
    return records


def _node(
    name: str,
    wake: str,
    cadence: str | None,
    hints: RuntimeHints | None,
    fingerprints: Mapping[str, str],
    resolutions: Iterable[Resolution],  # the node's own, in order
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "node": name,
        "contract_fingerprint": fingerprints[name],
        "wake_source": wake,
    }
    if cadence:
        record["cadence"] = cadence
    if hints is not None:
        record["runtime"] = hints.to_json()
    inputs = [
        {
            "name": r.need.name or f"input-{position}",
            "type": r.need.run_typed or "text",
            "description": " ".join(r.need.text.split()),
        }
        for position, r in enumerate(resolutions, start=1)
        if r.status == "caller"
    ]
    if inputs:
        record["caller_inputs"] = inputs
    return record


def diagnostic_records(diagnostics: Sequence[Diagnostic], paths: set[str]) -> list[dict[str, Any]]:
    """Upstream's diagnostic shape: the code rides in the message as `[code] …`."""
    records = []
    for d in sorted(diagnostics, key=Diagnostic.sort_key):
        where = f"line {d.span.line}" if d.span.path in paths else f"{d.span.path}:{d.span.line}"
        record: dict[str, Any] = {
            "severity": d.severity.value,
            "message": f"[{d.code}] {d.message} ({where})",
        }
        if d.span.path in paths:
            record["sourcePath"] = d.span.path
        records.append(record)
    return records


def dumps(document: Mapping[str, Any]) -> bytes:
    """The byte form written to disk: sorted keys, two-space indent, one final newline.

    That is the standard library's `json.dumps(…, indent=2, sort_keys=True,
    ensure_ascii=False)`; orjson writes the same bytes ten times faster, except for
    floats (it spells exponents differently), integers beyond 64 bits, lone surrogates
    and non-string keys. Those documents (rare: a float is a tolerance in a spec) go
    through the standard library, so the bytes never depend on which writer ran."""
    try:
        data = orjson.dumps(document, option=_ORJSON)
    except (orjson.JSONEncodeError, TypeError):
        return canonical_dumps(document)
    if _has_float(data):
        return canonical_dumps(document)
    return data


def canonical_dumps(document: Mapping[str, Any]) -> bytes:
    """The reference byte form (the standard library's encoder)."""
    return (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


_ORJSON = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
# In indented output every scalar ends its own line, a string value ends with `"` and no
# string holds a raw newline: a line ending in digits ends in a number token, a float
# exactly when its last digits follow `.` (a fraction) or `e`/`E` (an exponent). One
# search per such lead character: a literal first character is what `re` scans fastest.
_FLOAT_ENDS = tuple(re.compile(lead + rb"[-+]?[0-9]+,?\n") for lead in (rb"\.", rb"e", rb"E"))


def _has_float(data: bytes) -> bool:
    return any(end.search(data) is not None for end in _FLOAT_ENDS)
