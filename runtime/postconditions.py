"""Enforce a node's compiled postcondition validator on its structured truth at commit.

A validator (schemas/validator.schema.json) carries a JSON Schema over the truth, the
deterministic predicates the compiler lowered, and the ids of render-attested
postconditions. A render attests by writing `workspace/{node}/__attest.json` as
`{"attested": ["id", ...]}`. Every failure is a `Violation`; any violation means the
commit is refused and a `failed` receipt is written.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .canonical import loads_strict
from .schemas import validate_with

__all__ = ["ATTEST_FILE", "Violation", "check", "read_attestation"]

ATTEST_FILE = "__attest.json"
_ATTEST_LIMIT = 1024 * 1024
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Violation:
    """One unmet postcondition: which id (or schema path), its kind, and what was found."""

    id: str
    kind: str
    message: str

    def __str__(self) -> str:
        return f"[{self.kind}] {self.id}: {self.message}"


def read_attestation(workspace: Path) -> tuple[frozenset[str], str | None]:
    """Return the attested ids of a render, and a problem description if the file is bad
    (not a plain file, over 1 MiB, not strict JSON, not the expected shape)."""
    path = workspace / ATTEST_FILE
    if not path.exists() and not path.is_symlink():
        return frozenset(), None
    if path.is_symlink() or not path.is_file():
        return frozenset(), f"{ATTEST_FILE} is not a plain file"
    try:
        with open(path, "rb") as handle:
            raw = handle.read(_ATTEST_LIMIT + 1)
        if len(raw) > _ATTEST_LIMIT:
            return frozenset(), f"{ATTEST_FILE} is larger than {_ATTEST_LIMIT:,} bytes"
        data = loads_strict(raw)
    except OSError as exc:
        return frozenset(), f"{ATTEST_FILE} cannot be read: {exc.strerror or exc}"
    except ValueError as exc:  # JSON, UTF-8, NaN, depth
        return frozenset(), f"{ATTEST_FILE} is not JSON: {exc}"
    ids = data.get("attested") if isinstance(data, dict) else None
    if not isinstance(ids, list) or not all(isinstance(item, str) for item in ids):
        return frozenset(), f'{ATTEST_FILE} must be {{"attested": ["id", ...]}}'
    return frozenset(ids), None


def check(
    validator: Mapping[str, Any] | None, truth: Any, attested: frozenset[str]
) -> list[Violation]:
    """Check truth and attestations against a validator; [] means the commit may proceed."""
    if not validator:
        return []
    violations: list[Violation] = []
    schema = validator.get("schema")
    if schema is not None:
        for finding in validate_with(truth, schema):
            violations.append(Violation(id=finding.path, kind="schema", message=finding.message))
    for predicate in validator.get("predicates", []):
        problem = _evaluate(predicate, truth)
        if problem is not None:
            violations.append(
                Violation(id=predicate["id"], kind=predicate["kind"], message=problem)
            )
    for item in validator.get("attested", []):
        if item["id"] not in attested:
            violations.append(
                Violation(
                    id=item["id"],
                    kind="attestation",
                    message=f"not attested in {ATTEST_FILE}: {item.get('text', '')}".rstrip(),
                )
            )
    return violations


def _values(value: Any, path: list[str]) -> Iterator[Any]:
    """Every value at a dotted path, walking through lists transparently."""
    if isinstance(value, list):
        for item in value:
            yield from _values(item, path)
        return
    if not path:
        yield value
        return
    if isinstance(value, dict) and path[0] in value:
        yield from _values(value[path[0]], path[1:])


def _at(value: Any, path: list[str]) -> Iterator[Any]:
    """Values at a path without flattening the final list (for collections)."""
    if not path:
        yield value
        return
    if isinstance(value, list):
        for item in value:
            yield from _at(item, path)
    elif isinstance(value, dict) and path[0] in value:
        yield from _at(value[path[0]], path[1:])


def _evaluate(predicate: Mapping[str, Any], truth: Any) -> str | None:
    kind = predicate["kind"]
    path = str(predicate["path"]).split(".")
    where = predicate["path"]
    if kind in ("always", "never", "exists", "compare"):
        found = list(_values(truth, path))
        if kind == "exists":
            return None if any(v is not None for v in found) else f"`{where}` is missing"
        if kind == "always":
            if not found:
                return f"`{where}` is missing"
            bad = [v for v in found if not _same(v, predicate["equals"])]
            return f"`{where}` is {bad[0]!r}, expected {predicate['equals']!r}" if bad else None
        if kind == "never":
            hit = [v for v in found if _same(v, predicate["equals"])]
            return f"`{where}` is {hit[0]!r}" if hit else None
        numbers = [v for v in found if isinstance(v, int | float) and not isinstance(v, bool)]
        if not numbers:
            return f"no number at `{where}`"
        compare = _OPS[predicate["op"]]
        bad = [v for v in numbers if not compare(v, predicate["value"])]
        return (
            f"`{where}` is {bad[0]!r}, not {predicate['op']} {predicate['value']!r}"
            if bad
            else None
        )
    if kind == "every":
        key = predicate["has"]
        for collection in _at(truth, path):
            items = list(collection.values()) if isinstance(collection, dict) else collection
            if not isinstance(items, list):
                return f"`{where}` is not a collection"
            for index, item in enumerate(items):
                if not isinstance(item, dict) or item.get(key) is None:
                    return f"item {index} of `{where}` has no `{key}`"
        return None
    if kind == "count":
        total = 0
        for collection in _at(truth, path):
            if isinstance(collection, list | dict):
                total += len(collection)
        if not _OPS[predicate["op"]](total, predicate["value"]):
            return f"`{where}` has {total} items, not {predicate['op']} {predicate['value']}"
        return None
    return f"unknown predicate kind {kind!r}"


def _same(found: Any, want: Any) -> bool:
    # JSON equality: true is not 1, but 1 equals 1.0.
    if isinstance(found, bool) or isinstance(want, bool):
        return found is want
    return bool(found == want)
