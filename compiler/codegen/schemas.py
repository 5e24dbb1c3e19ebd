"""prosec's packaged JSON Schemas, and validation against them (the one jsonschema user)."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

SCHEMA_NAMES = ("compiled-intent", "canonicalizer-spec", "validator", "config")


@functools.cache
def _loaded() -> tuple[Any, dict[str, Any]]:
    import referencing
    from referencing.jsonschema import DRAFT202012

    schemas: dict[str, Any] = {}
    registry: Any = referencing.Registry()
    for entry in resources.files("prosec.schemas").iterdir():
        if entry.name.endswith(".schema.json"):
            schema = json.loads(entry.read_text(encoding="utf-8"))
            schemas[entry.name.removesuffix(".schema.json")] = schema
            registry = registry.with_resource(schema["$id"], DRAFT202012.create_resource(schema))
    return registry, schemas


def schema(name: str) -> Any:
    """A packaged schema by short name (`compiled-intent`, `validator`, …)."""
    return _loaded()[1][name]


@functools.cache
def _validator(name: str) -> Any:
    import jsonschema

    registry, schemas = _loaded()
    return jsonschema.Draft202012Validator(_bundle(schemas[name], schemas), registry=registry)


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


def problems(name: str, document: Any) -> list[tuple[str, str]]:
    """Every violation of schema `name` as (JSON path, message), in document order."""
    found = [(error.json_path, _message(error)) for error in _validator(name).iter_errors(document)]
    return sorted(set(found))


def _message(error: Any) -> str:
    """A shorter message for `oneOf`/`anyOf` failures than jsonschema's full dump."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        best = min(error.context, key=lambda e: (len(e.path), e.message))
        return f"matches no allowed form ({best.message})"
    message: str = error.message
    return message if len(message) <= 200 else message[:197] + "…"
