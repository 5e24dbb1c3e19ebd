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
    return jsonschema.Draft202012Validator(schemas[name], registry=registry)


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
