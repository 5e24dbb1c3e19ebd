"""A jsonschema-free check that a small document is certainly valid against a packaged
schema: the hot path of every command reading `prose.toml`.

Importing jsonschema (and referencing, rpds, attrs) costs more than a whole `prosec lint
FILE` may take, and almost every `prose.toml` is valid. `certainly_valid` walks the
document and the schema together, interpreting the JSON Schema keywords the packaged
schemas use, as `schemas` has jsonschema do (Python `re.search` for patterns, jsonschema's
equality for `enum`/`const`, its type rules with `number` meaning a finite number). It answers True only when every keyword met is
understood and satisfied; anything else (a keyword it does not know, a value that is not
JSON, a doubtful case) is an undecided answer, and the caller validates with jsonschema,
which also words the problems. The tests compare it with jsonschema over random
documents: True never comes with a finding.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from prosec import schemas as schemas_package

__all__ = ["certainly_valid"]

# keywords that only annotate: they never fail a document
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$defs", "$comment", "title", "description", "default", "examples"}
)
_DIRECTORY = Path(schemas_package.__file__).parent


def certainly_valid(document: Any, schema_name: str) -> bool:
    """True when `document` is valid against the packaged schema `schema_name` and this
    check could tell; False means "ask jsonschema" (invalid, or not decided here)."""
    root = _packaged(schema_name)
    return _check(document, root, root) is True


@functools.cache
def _packaged(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((_DIRECTORY / name).read_text(encoding="utf-8"))
    return loaded


@functools.cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


# a tri-state answer: True (valid), False (certainly invalid), None (not decided here)
Verdict = bool | None


def _check(value: Any, schema: Any, root: Mapping[str, Any]) -> Verdict:
    if schema is True:
        return True
    if schema is False:
        return False
    if not isinstance(schema, dict):
        return None
    verdict: Verdict = True
    for keyword, argument in schema.items():
        if keyword in _ANNOTATIONS:
            continue
        checker = _KEYWORDS.get(keyword)
        if checker is None:
            return None  # a keyword this check does not interpret
        found = checker(value, argument, schema, root)
        if found is None:
            verdict = None
        elif found is False:
            return False if verdict is True else None
    return verdict


def _all(verdicts: Any) -> Verdict:
    result: Verdict = True
    for verdict in verdicts:
        if verdict is False:
            return False if result is True else None
        if verdict is None:
            result = None
    return result


# -- types (jsonschema's draft 2020-12 type checker) ------------------------------------


def _is_json(value: Any) -> bool:
    return value is None or type(value) in (str, int, float, bool, dict, list)


def _is_type(value: Any, name: str) -> bool | None:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if name == "number":
        return _number(value)
    return None


def _type(value: Any, argument: Any, _schema: Any, _root: Any) -> Verdict:
    if not _is_json(value):
        return None  # a TOML date or time: jsonschema decides (and words it)
    names = argument if isinstance(argument, list) else [argument]
    answers = [_is_type(value, name) for name in names]
    if any(answer is True for answer in answers):
        return True
    return None if any(answer is None for answer in answers) else False


# -- equality (jsonschema's `equal`: booleans are not numbers) --------------------------


def _equal(one: Any, two: Any) -> bool | None:
    if not (_is_json(one) and _is_json(two)):
        return None
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, list) and isinstance(two, list):
        if len(one) != len(two):
            return False
        pairs = [_equal(a, b) for a, b in zip(one, two, strict=True)]
        return None if None in pairs else all(pairs)
    if isinstance(one, dict) and isinstance(two, dict):
        if one.keys() != two.keys():
            return False
        pairs = [_equal(one[k], two[k]) for k in one]
        return None if None in pairs else all(pairs)
    if isinstance(one, bool) or isinstance(two, bool):
        return type(one) is type(two) and one == two
    return bool(one == two)


def _enum(value: Any, argument: Any, _schema: Any, _root: Any) -> Verdict:
    if not isinstance(argument, list):
        return None
    answers = [_equal(value, option) for option in argument]
    if True in answers:
        return True
    return None if None in answers else False


def _const(value: Any, argument: Any, _schema: Any, _root: Any) -> Verdict:
    return _equal(value, argument)


# -- strings, numbers, arrays ------------------------------------------------------------


def _min_length(value: Any, argument: Any, _schema: Any, _root: Any) -> Verdict:
    return not isinstance(value, str) or len(value) >= argument


def _max_length(value: Any, argument: Any, _schema: Any, _root: Any) -> Verdict:
    return not isinstance(value, str) or len(value) <= argument


def _pattern(value: Any, argument: Any, _schema: Any, _root: Any) -> Verdict:
    return not isinstance(value, str) or _regex(argument).search(value) is not None


def _number(value: Any) -> bool:
    """A JSON number, as `schemas` redefines it: finite (TOML allows `inf` and `nan`)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return isinstance(value, int) or math.isfinite(value)


def _minimum(value: Any, argument: Any, _schema: Any, _root: Any) -> Verdict:
    return not _number(value) or value >= argument


def _maximum(value: Any, argument: Any, _schema: Any, _root: Any) -> Verdict:
    return not _number(value) or value <= argument


def _exclusive_minimum(value: Any, argument: Any, _schema: Any, _root: Any) -> Verdict:
    return not _number(value) or value > argument


def _exclusive_maximum(value: Any, argument: Any, _schema: Any, _root: Any) -> Verdict:
    return not _number(value) or value < argument


def _items(value: Any, argument: Any, schema: Any, root: Any) -> Verdict:
    if not isinstance(value, list):
        return True
    if "prefixItems" in schema:
        return None
    return _all(_check(item, argument, root) for item in value)


def _min_items(value: Any, argument: Any, _schema: Any, _root: Any) -> Verdict:
    return not isinstance(value, list) or len(value) >= argument


def _max_items(value: Any, argument: Any, _schema: Any, _root: Any) -> Verdict:
    return not isinstance(value, list) or len(value) <= argument


# -- objects -----------------------------------------------------------------------------


def _properties(value: Any, argument: Any, _schema: Any, root: Any) -> Verdict:
    if not isinstance(value, dict):
        return True
    return _all(_check(value[key], sub, root) for key, sub in argument.items() if key in value)


def _pattern_properties(value: Any, argument: Any, _schema: Any, root: Any) -> Verdict:
    if not isinstance(value, dict):
        return True
    return _all(
        _check(item, sub, root)
        for pattern, sub in argument.items()
        for key, item in value.items()
        if _regex(pattern).search(key)
    )


def _additional(value: Any, argument: Any, schema: Any, root: Any) -> Verdict:
    if not isinstance(value, dict):
        return True
    known = schema.get("properties", {})
    patterns = [_regex(p) for p in schema.get("patternProperties", {})]
    extra = [k for k in value if k not in known and not any(p.search(k) for p in patterns)]
    return _all(_check(value[key], argument, root) for key in extra)


def _required(value: Any, argument: Any, _schema: Any, _root: Any) -> Verdict:
    return not isinstance(value, dict) or all(key in value for key in argument)


def _property_names(value: Any, argument: Any, _schema: Any, root: Any) -> Verdict:
    if not isinstance(value, dict):
        return True
    return _all(_check(key, argument, root) for key in value)


# -- combinators and references ----------------------------------------------------------


def _any_of(value: Any, argument: Any, _schema: Any, root: Any) -> Verdict:
    answers = [_check(value, sub, root) for sub in argument]
    if True in answers:
        return True
    return None if None in answers else False


def _one_of(value: Any, argument: Any, _schema: Any, root: Any) -> Verdict:
    answers = [_check(value, sub, root) for sub in argument]
    if None in answers:
        return None
    return answers.count(True) == 1


def _ref(value: Any, argument: Any, _schema: Any, root: Any) -> Verdict:
    if not isinstance(argument, str):
        return None
    document, _, pointer = argument.partition("#")
    target: Any = root
    if document:
        if "/" in document or not document.endswith(".schema.json"):
            return None  # only the packaged schemas, by file name
        target = root = _packaged(document)
    if pointer:
        if not pointer.startswith("/"):
            return None
        for part in pointer[1:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, dict) or part not in target:
                return None
            target = target[part]
    return _check(value, target, root)


_KEYWORDS = {
    "type": _type,
    "enum": _enum,
    "const": _const,
    "minLength": _min_length,
    "maxLength": _max_length,
    "pattern": _pattern,
    "minimum": _minimum,
    "maximum": _maximum,
    "exclusiveMinimum": _exclusive_minimum,
    "exclusiveMaximum": _exclusive_maximum,
    "items": _items,
    "minItems": _min_items,
    "maxItems": _max_items,
    "properties": _properties,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional,
    "required": _required,
    "propertyNames": _property_names,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "$ref": _ref,
}
