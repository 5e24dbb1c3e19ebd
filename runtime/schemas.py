"""Load prosec's JSON Schemas (importlib.resources) and validate documents against them.

The runtime's only user of jsonschema/referencing; every schema is registered under its
`$id`, so cross-schema `$ref`s resolve offline.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jsonschema
import referencing
from referencing.jsonschema import DRAFT202012

__all__ = ["SchemaFinding", "load_schema", "validate", "validate_with"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaFinding:
    """One schema violation: where in the document (JSON path) and what is wrong."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


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


def validate(document: Any, schema_name: str) -> list[SchemaFinding]:
    """Validate against a packaged schema; return every finding (empty when valid)."""
    return validate_with(document, load_schema(schema_name))


def validate_with(document: Any, schema: Any) -> list[SchemaFinding]:
    """Validate against an arbitrary draft 2020-12 schema (a node's truth schema, say)."""
    validator = jsonschema.Draft202012Validator(schema, registry=_registry()[0])
    findings = [
        SchemaFinding(path=error.json_path, message=error.message)
        for error in validator.iter_errors(document)
    ]
    return sorted(findings, key=lambda finding: (finding.path, finding.message))


def check_schema(schema: Any) -> str | None:
    """Return why `schema` is not a valid draft 2020-12 schema, or None."""
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return str(exc.message)
    return None
