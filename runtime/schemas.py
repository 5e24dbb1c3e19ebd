"""Load prosec's JSON Schemas (importlib.resources) and validate documents against them.

The runtime's only user of jsonschema/referencing; every schema is registered under its
`$id`, so cross-schema `$ref`s resolve offline.
"""

from __future__ import annotations

import functools
import json
import math
import re
from importlib import resources
from typing import Any
from urllib.parse import urljoin

import jsonschema
import referencing
import referencing.exceptions
from referencing.jsonschema import DRAFT202012

from .problems import Problem

__all__ = ["Problem", "check_schema", "load_schema", "locate", "validate", "validate_with"]


@functools.cache
def _registry() -> tuple[referencing.Registry[Any], dict[str, Any]]:
    schemas: dict[str, Any] = {}
    registry: referencing.Registry[Any] = referencing.Registry(retrieve=_never_fetch)  # type: ignore[call-arg]  # attrs alias
    for entry in resources.files("prosec.schemas").iterdir():
        if entry.name.endswith(".schema.json"):
            schema = json.loads(entry.read_text(encoding="utf-8"))
            schemas[entry.name] = schema
            registry = registry.with_resource(schema["$id"], DRAFT202012.create_resource(schema))
    return registry, schemas


def _never_fetch(uri: str) -> referencing.Resource[Any]:
    """Schemas are resolved offline: an unknown `$ref` is unresolvable, never downloaded."""
    raise referencing.exceptions.NoSuchResource(ref=uri)  # type: ignore[call-arg]


def load_schema(name: str) -> Any:
    """Return a packaged schema by file name (e.g. `receipt.schema.json`)."""
    return _registry()[1][name]


def validate(document: Any, schema_name: str, *, bundled: bool = True) -> list[Problem]:
    """Validate against a packaged schema; return every finding (empty when valid).

    `bundled=False` checks against the schema as written, references resolved through the
    registry: slower, and what the tests compare the bundled form with."""
    validator = _packaged_validator(schema_name) if bundled else _as_written(schema_name)
    findings = {
        Problem(path=error.json_path, message=_message(error), location=tuple(error.absolute_path))
        for error in validator.iter_errors(document)
    }
    return sorted(findings, key=lambda finding: (finding.path, finding.message))


def locate(document: Any, schema_name: str) -> list[Problem]:
    """Like `validate`, with findings placed for a person editing the document: an unknown
    key or a bad key name at that key, and a bad value described by the `title` (else the
    `description`) of the schema it fails (`expected a diagnostic code …, not 'x'`)."""
    findings: set[Problem] = set()
    for error in _packaged_validator(schema_name).iter_errors(document):
        where = tuple(error.absolute_path)
        if error.validator == "additionalProperties" and error.validator_value is False:
            known = sorted(error.schema.get("properties", {}))
            patterns = [re.compile(p) for p in error.schema.get("patternProperties", {})]
            unknown = [k for k in error.instance if not any(p.search(k) for p in patterns)]
            for key in sorted(set(unknown) - set(known)):
                expected = f"one of {', '.join(known)}" if known else "none here"
                findings.add(_finding((*where, key), f"unknown key (expected {expected})"))
            continue
        if "propertyNames" in error.absolute_schema_path:
            where = (*where, error.instance)
        schema = error.schema if isinstance(error.schema, dict) else {}
        described = schema.get("title") or schema.get("description")
        if described and error.validator in ("enum", "const", "anyOf", "oneOf", "pattern"):
            message = f"expected {described}, not {error.instance!r}"
        else:
            message = _message(error)
        findings.add(_finding(where, message))
    return sorted(findings, key=lambda finding: (finding.path, finding.message))


def _finding(location: tuple[str | int, ...], message: str) -> Problem:
    path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in location)
    return Problem(path=path, message=message, location=location)


def _json_number(checker: Any, instance: Any) -> bool:
    """A JSON number: finite (TOML and Python floats can be `inf` or `nan`; JSON's cannot)."""
    if isinstance(instance, bool) or not isinstance(instance, int | float):
        return False
    return isinstance(instance, int) or math.isfinite(instance)


# draft 2020-12 with `number` meaning a JSON number, so `timeout = inf` is not "positive"
_extend: Any = jsonschema.validators.extend  # untyped in types-jsonschema
_Validator: Any = _extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("number", _json_number),
)


@functools.cache
def _packaged_validator(schema_name: str) -> Any:
    registry, schemas = _registry()
    by_short = {name.removesuffix(".schema.json"): s for name, s in schemas.items()}
    return _Validator(_bundle(schemas[schema_name], by_short), registry=registry)


@functools.cache
def _as_written(schema_name: str) -> Any:
    registry, schemas = _registry()
    return _Validator(schemas[schema_name], registry=registry)


def _bundle(root: Any, schemas: dict[str, Any]) -> Any:
    """An equivalent, faster schema: `$ref`s inlined and every `oneOf` whose branches differ
    by a required `kind` constant turned into if/then, so a document is checked against its
    own branch instead of all of them.

    A `$ref` with sibling keywords (`{"$ref": …, "description": …}`) applies both, as draft
    2020-12 says: the target is inlined into an `allOf` beside the siblings. A `$ref` met
    again inside its own expansion (a recursive schema) stays a reference by absolute URI,
    which the registry resolves."""

    def walk(node: Any, base: Any, expanding: tuple[str, ...]) -> Any:
        if not isinstance(node, dict):
            return node  # a boolean schema
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _BUNDLED_AWAY:
                continue
            if key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {name: walk(sub, base, expanding) for name, sub in value.items()}
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                out[key] = [walk(sub, base, expanding) for sub in value]
            elif key in _SCHEMA_VALUES:
                out[key] = walk(value, base, expanding)
            else:
                out[key] = value  # an annotation or a value (enum, const, default): verbatim
        if "$ref" in node:
            target, target_base, uri = _resolve(node["$ref"], base, schemas)
            if uri in expanding:
                out["$ref"] = uri
            else:
                inlined = walk(target, target_base, (*expanding, uri))
                if not out:
                    return inlined
                out["allOf"] = [inlined, *out.get("allOf", [])]
        kinds = _discriminants(out)
        if kinds is not None:
            branches = out.pop("oneOf")
            out.setdefault("properties", {})["kind"] = {"enum": kinds}
            out["allOf"] = [
                *out.get("allOf", []),
                *(
                    {"if": {"properties": {"kind": {"const": kind}}}, "then": branch}
                    for kind, branch in zip(kinds, branches, strict=True)
                ),
            ]
        return out

    bundled = walk(root, root, ())
    bundled["$schema"] = root["$schema"]
    return bundled


# keywords the bundled form drops: every reference is inlined, so `$defs` are not needed,
# and `$id`s would change how the remaining (recursive) references resolve
_BUNDLED_AWAY = frozenset({"$ref", "$defs", "$id", "$schema"})
# the draft 2020-12 keywords whose values hold subschemas (everything else is kept verbatim)
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_VALUES = frozenset(
    {
        "items",
        "additionalProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "propertyNames",
        "contains",
        "not",
        "if",
        "then",
        "else",
    }
)


def _resolve(ref: str, base: Any, schemas: dict[str, Any]) -> tuple[Any, Any, str]:
    """The subschema a `$ref` names (`#/$defs/x`, `other.schema.json`, `other.schema.json#/…`),
    the schema it belongs to, and its absolute URI."""
    file, _, pointer = ref.partition("#")
    document = schemas[file.removesuffix(".schema.json")] if file else base
    target = document
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        target = target[int(token)] if isinstance(target, list) else target[token]
    return target, document, f"{document['$id']}#{pointer}"


def _discriminants(node: dict[str, Any]) -> list[Any] | None:
    """The `kind` constants of `node`'s `oneOf` branches, when the rewrite keeps its meaning:
    `kind` is required, not constrained already, and each branch fixes a different value."""
    branches = node.get("oneOf")
    if not isinstance(branches, list) or not branches:
        return None
    if "kind" not in node.get("required", ()) or "kind" in node.get("properties", {}):
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
    """Validate against an arbitrary draft 2020-12 schema (a node's truth schema, say).
    A `$ref` that is neither local nor one of prosec's schemas is a problem, never a fetch."""
    validator = jsonschema.Draft202012Validator(schema, registry=_registry()[0])
    try:
        return sorted(
            Problem(error.json_path, _message(error)) for error in validator.iter_errors(document)
        )
    except referencing.exceptions.Unresolvable as exc:
        return [Problem("$", f"the schema's $ref {exc.ref!r} cannot be resolved offline")]


def check_schema(schema: Any) -> str | None:
    """Return why `schema` is not a valid draft 2020-12 schema, or None (the verdict of
    jsonschema's `check_schema`, from the flattened meta-schema below)."""
    try:
        error = next(_meta_validator().iter_errors(schema), None)
    except referencing.exceptions.Unresolvable:  # a shape the flattening missed
        error = next(_original_meta().iter_errors(schema), None)
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
    from jsonschema_specifications import REGISTRY as SPECIFICATIONS

    cls = jsonschema.Draft202012Validator
    top = SPECIFICATIONS.contents(META)
    properties: dict[str, Any] = {}
    defs: dict[str, Any] = {}
    merged = {META}
    for part in top.get("allOf", []):
        uri = urljoin(META, part["$ref"])
        vocabulary = SPECIFICATIONS.contents(uri)
        shaped = set(vocabulary) <= _VOCABULARY_KEYS | {"properties", "$defs"}
        clash = set(properties) & set(vocabulary.get("properties", {})) or any(
            defs.get(k, v) != v for k, v in vocabulary.get("$defs", {}).items()
        )
        if not shaped or clash or vocabulary.get("type") != top.get("type"):
            return _original_meta()
        merged.add(uri)
        properties.update(_static(vocabulary.get("properties", {}), uri, merged))
        defs.update(_static(vocabulary.get("$defs", {}), uri, merged))
    properties.update(_static(top.get("properties", {}), META, merged))
    flat = {
        "$schema": META,
        "$id": "urn:prosec:draft-2020-12-meta-flat",
        "type": top["type"],
        "properties": properties,
        "$defs": defs,
    }
    return cls(flat, format_checker=cls.FORMAT_CHECKER, registry=_registry()[0])


def _original_meta() -> Any:
    cls = jsonschema.Draft202012Validator
    return cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER)


def _static(node: Any, base: str, merged: set[str]) -> Any:
    """`$dynamicRef: "#meta"` → `$ref: "#"`; a `$ref` into the `$defs` of a merged
    vocabulary (`meta/validation#/$defs/stringArray`) → a local `#/$defs/…`."""
    if isinstance(node, list):
        return [_static(item, base, merged) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _static(v, base, merged) for k, v in node.items() if k != "$dynamicRef"}
    if node.get("$dynamicRef") == "#meta":
        out["$ref"] = "#"
    elif "$dynamicRef" in node:
        out["$dynamicRef"] = node["$dynamicRef"]
    ref = node.get("$ref")
    if isinstance(ref, str) and not ref.startswith("#"):
        document, _, fragment = urljoin(base, ref).partition("#")
        if document in merged and fragment.startswith("/$defs/"):
            out["$ref"] = "#" + fragment
    return out
