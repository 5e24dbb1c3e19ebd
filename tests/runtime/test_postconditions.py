"""Postcondition validators enforced on truth and attestations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from prosec.runtime.postconditions import check, read_attestation
from prosec.runtime.schemas import validate

TRUTH = {
    "digest": {"items": [{"source": "a", "score": 3}, {"source": "b", "score": 9}]},
    "draft": False,
    "count": 2,
}


def run(validator: dict[str, Any], truth: Any = TRUTH, attested: frozenset[str] = frozenset()):
    assert validate(validator, "validator.schema.json") == []
    return check(validator, truth, attested)


@pytest.mark.parametrize(
    ("predicate", "ok"),
    [
        ({"kind": "always", "path": "draft", "equals": False}, True),
        ({"kind": "always", "path": "draft", "equals": True}, False),
        ({"kind": "always", "path": "missing", "equals": True}, False),
        ({"kind": "never", "path": "digest.items.source", "equals": "c"}, True),
        ({"kind": "never", "path": "digest.items.source", "equals": "a"}, False),
        ({"kind": "exists", "path": "digest.items"}, True),
        ({"kind": "exists", "path": "digest.summary"}, False),
        ({"kind": "every", "path": "digest.items", "has": "source"}, True),
        ({"kind": "every", "path": "digest.items", "has": "url"}, False),
        ({"kind": "count", "path": "digest.items", "op": ">=", "value": 1}, True),
        ({"kind": "count", "path": "digest.items", "op": "<", "value": 2}, False),
        ({"kind": "compare", "path": "digest.items.score", "op": "<=", "value": 10}, True),
        ({"kind": "compare", "path": "digest.items.score", "op": "<", "value": 5}, False),
    ],
)
def test_predicates(predicate: dict[str, Any], ok: bool) -> None:
    violations = run({"mode": "deterministic", "predicates": [{"id": "p1", **predicate}]})
    assert (violations == []) is ok
    if not ok:
        assert violations[0].id == "p1"
        assert violations[0].kind == predicate["kind"]


def test_schema_violations() -> None:
    validator = {
        "mode": "deterministic",
        "schema": {
            "type": "object",
            "required": ["count"],
            "properties": {"count": {"type": "string"}},
        },
    }
    (violation,) = run(validator)
    assert violation.kind == "schema" and violation.id == "$.count"


def test_attestations(tmp_path: Path) -> None:
    validator = {
        "mode": "render-attested",
        "attested": [{"id": "tone", "text": "The tone is calm."}],
    }
    (missing,) = run(validator)
    assert missing.kind == "attestation" and missing.id == "tone"
    (tmp_path / "__attest.json").write_text(json.dumps({"attested": ["tone"]}))
    ids, problem = read_attestation(tmp_path)
    assert problem is None
    assert run(validator, attested=ids) == []


def test_bad_attestation_file(tmp_path: Path) -> None:
    (tmp_path / "__attest.json").write_text('["tone"]')
    ids, problem = read_attestation(tmp_path)
    assert ids == frozenset() and problem is not None


def test_validator_schema_rejects_unknown_kinds() -> None:
    bad = {"mode": "deterministic", "predicates": [{"id": "x", "kind": "vibes", "path": "a"}]}
    assert validate(bad, "validator.schema.json") != []
