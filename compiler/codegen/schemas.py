"""prosec's packaged JSON Schemas by short name; validation is the runtime's (one jsonschema user)."""

from __future__ import annotations

from typing import Any

from prosec.runtime.schemas import load_schema, validate

SCHEMA_NAMES = ("compiled-intent", "canonicalizer-spec", "validator", "config")


def schema(name: str) -> Any:
    """A packaged schema by short name (`compiled-intent`, `validator`, …)."""
    return load_schema(f"{name}.schema.json")


def problems(name: str, document: Any) -> list[tuple[str, str]]:
    """Every violation of schema `name` as (JSON path, message), sorted."""
    return [(f.path, f.message) for f in validate(document, f"{name}.schema.json")]
