"""Load prosec's JSON Schemas (importlib.resources) and validate documents against them.

The runtime's only user of jsonschema/referencing; every schema is registered under its
`$id`, so cross-schema `$ref`s resolve offline.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any
from urllib.parse import urljoin

import jsonschema
import referencing
from referencing.jsonschema import DRAFT202012

from .problems import Problem

__all__ = ["Problem", "check_schema", "load_schema", "validate", "validate_with"]


@functools.cache
def _registry() -> tuple[referencing.Registry[Any], dict[str, Any]]:
    schemas: dict[str, Any] = {}
    registry: referencing.Registry[Any] = referencing.Registry()
    for entry in resources.files("prosec.schemas").iterdir():
        if entry.name.endswith(".schema.json"):
            schema = json.loads(entry.read_text(encoding="utf-8"))
            schemas[entry.name] = schema
            registry = registry.with_resource(schema["$id"], DRAFT202012.create_resource(schema))
    return registry, schemas


def load_schema(name: str) -> Any:
    """Return a packaged schema by file name (e.g. `receipt.schema.json`)."""
    return _registry()[1][name]


def validate(document: Any, schema_name: str) -> list[Problem]:
    """Validate against a packaged schema; return every problem, sorted (empty when valid)."""
    return sorted(
        {
            Problem(error.json_path, _message(error))
            for error in _packaged_validator(schema_name).iter_errors(document)
        }
    )


@functools.cache
def _packaged_validator(schema_name: str) -> jsonschema.Draft202012Validator:
    registry, schemas = _registry()
    by_short = {name.removesuffix(".schema.json"): s for name, s in schemas.items()}
    return jsonschema.Draft202012Validator(
        _bundle(schemas[schema_name], by_short), registry=registry
    )


def _bundle(root: Any, schemas: dict[str, Any]) -> Any:
    """An equivalent, faster schema: `$ref`s inlined (our schemas are not recursive) and
    every `oneOf` whose branches differ by a `kind` constant turned into if/then, so a
    document is checked against its own branch instead of all of them."""

    def walk(node: Any, base: Any) -> Any:
        if isinstance(node, list):
            return [walk(item, base) for item in node]
        if not isinstance(node, dict):
            return node
        if set(node) == {"$ref"}:
            ref = node["$ref"]
            if ref.startswith("#/$defs/"):
                return walk(base["$defs"][ref.removeprefix("#/$defs/")], base)
            other = schemas[ref.removesuffix(".schema.json")]
            return walk({k: v for k, v in other.items() if k not in ("$id", "$schema")}, other)
        out = {k: walk(v, base) for k, v in node.items() if k != "$defs"}
        kinds = _discriminants(out.get("oneOf"))
        if kinds is not None:
            branches = out.pop("oneOf")
            out.setdefault("properties", {})["kind"] = {"enum": kinds}
            out["allOf"] = [
                {"if": {"properties": {"kind": {"const": kind}}}, "then": branch}
                for kind, branch in zip(kinds, branches, strict=True)
            ]
        return out

    bundled = walk(root, root)
    bundled["$schema"] = root["$schema"]
    return bundled


def _discriminants(branches: Any) -> list[Any] | None:
    if not isinstance(branches, list) or not branches:
        return None
    kinds = []
    for branch in branches:
        const = branch.get("properties", {}).get("kind", {}) if isinstance(branch, dict) else {}
        if not isinstance(const, dict) or "const" not in const:
            return None
        kinds.append(const["const"])
    return kinds if len(set(map(repr, kinds))) == len(kinds) else None


def _message(error: Any) -> str:
    """A shorter message for `oneOf`/`anyOf` failures than jsonschema's full dump."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        best = min(error.context, key=lambda e: (len(e.path), e.message))
        return f"matches no allowed form ({best.message})"
    message: str = error.message
    return message if len(message) <= 200 else message[:197] + "…"


def validate_with(document: Any, schema: Any) -> list[Problem]:
    """Validate against an arbitrary draft 2020-12 schema (a node's truth schema, say)."""
    validator = jsonschema.Draft202012Validator(schema, registry=_registry()[0])
    return sorted(
        Problem(error.json_path, _message(error)) for error in validator.iter_errors(document)
    )


def check_schema(schema: Any) -> str | None:
    """Return why `schema` is not a valid draft 2020-12 schema, or None (the verdict of
    jsonschema's `check_schema`, from the flattened meta-schema below)."""
    error = next(_meta_validator().iter_errors(schema), None)
    return None if error is None else str(error.message)


META = "https://json-schema.org/draft/2020-12/schema"
_VOCABULARY_KEYS = {"$schema", "$id", "$vocabulary", "$dynamicAnchor", "title", "type"}


@functools.cache
def _meta_validator() -> Any:
    """The draft 2020-12 meta-schema as one document, several times faster to check
    against: its vocabularies (`allOf` of object schemas with disjoint `properties`)
    merged into one, and each `$dynamicRef: "#meta"` made `$ref: "#"`, which is what it
    resolves to when a schema is checked against the whole meta-schema. Should the
    meta-schema ever take another shape, the original is used."""
    from jsonschema.validators import SPECIFICATIONS

    cls = jsonschema.Draft202012Validator
    top = SPECIFICATIONS.contents(META)
    properties: dict[str, Any] = {}
    defs: dict[str, Any] = {}
    for part in top.get("allOf", []):
        vocabulary = SPECIFICATIONS.contents(urljoin(META, part["$ref"]))
        shaped = set(vocabulary) <= _VOCABULARY_KEYS | {"properties", "$defs"}
        clash = set(properties) & set(vocabulary.get("properties", {})) or any(
            defs.get(k, v) != v for k, v in vocabulary.get("$defs", {}).items()
        )
        if not shaped or clash or vocabulary.get("type") != top.get("type"):
            return cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER)
        properties.update(vocabulary.get("properties", {}))
        defs.update(vocabulary.get("$defs", {}))
    properties.update(top.get("properties", {}))
    flat = {
        "$schema": META,
        "$id": "urn:prosec:draft-2020-12-meta-flat",
        "type": top["type"],
        "properties": _static(properties),
        "$defs": _static(defs),
    }
    return cls(flat, format_checker=cls.FORMAT_CHECKER)


def _static(node: Any) -> Any:
    if isinstance(node, list):
        return [_static(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _static(v) for k, v in node.items() if k != "$dynamicRef"}
    if node.get("$dynamicRef") == "#meta":
        out["$ref"] = "#"
    elif "$dynamicRef" in node:
        out["$dynamicRef"] = node["$dynamicRef"]
    return out
