"""The typed protocol: one vocabulary with the schemas, members that serialize as their
strings, and the checks that guard every record read back from storage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from prosec.compiler import ir
from prosec.runtime import protocol
from prosec.runtime.backends import BackendError
from prosec.runtime.backends.base import verify_stored
from prosec.runtime.backends.filesystem import FilesystemBackend
from prosec.runtime.canonical import canonical_json, token
from prosec.runtime.executor import EngineOptions
from prosec.runtime.keys import external_key
from prosec.runtime.protocol import (
    ReceiptStatus,
    WakeSource,
    pending_problem,
    receipt_problem,
    wake_problem,
)
from prosec.runtime.receipts import LedgerError, build_receipt, content_hash, load_ledger
from prosec.runtime.reconciler import Wake
from prosec.runtime.schemas import load_schema
from prosec.runtime.session import open_project

from ..conftest import DATA
from .project import Project, intent


def _enum(schema: dict[str, Any], *path: str) -> list[str]:
    node: Any = schema
    for key in path:
        node = node[key]
    return list(node["enum"])


def test_vocabularies_are_the_schemas() -> None:
    receipt = load_schema("receipt.schema.json")
    props = receipt["properties"]
    assert list(ReceiptStatus) == _enum(props, "status")
    assert list(WakeSource) == _enum(props, "wake", "properties", "source")
    assert list(WakeSource) == _enum(props, "cost", "properties", "surprise_cause")
    compiled = load_schema("compiled-intent.schema.json")
    assert list(WakeSource) == _enum(compiled["$defs"], "node", "properties", "wake_source")


def test_the_compiler_speaks_the_runtime_wake_source() -> None:
    assert ir.WakeSource is protocol.WakeSource


def _receipt(source: str, status: str) -> dict[str, Any]:
    return dict(
        build_receipt(
            node="a",
            prev=None,
            contract_fingerprint="sha256:" + "0" * 64,
            wake_source=source,  # a plain string or a member
            wake_refs=["r"],
            input_fingerprints=[],
            fingerprints={"@atomic": "sha256:" + "1" * 64},
            status=status,
        )
    )


def test_members_serialize_as_their_strings() -> None:
    typed = _receipt(WakeSource.EXTERNAL, ReceiptStatus.SKIPPED)
    plain = _receipt("external", "skipped")
    assert canonical_json(typed) == canonical_json(plain)
    assert json.dumps(typed, sort_keys=True) == json.dumps(plain, sort_keys=True)
    assert typed["content_hash"] == plain["content_hash"] == content_hash(plain)


def test_built_and_upstream_receipts_have_the_envelope_shape() -> None:
    assert receipt_problem(_receipt("input", "rendered")) is None
    vectors = json.loads((DATA / "vectors.json").read_text(encoding="utf-8"))
    for case in vectors["receipt_hashes"]:
        receipt = {**case["receipt"], "content_hash": case["content_hash"]}
        assert receipt_problem(receipt) is None, case["name"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"status": None}, "`status` is not a string"),
        ({"status": "judged"}, "status 'judged' is not one of rendered, skipped, failed"),
        ({"wake": {"source": "caller", "refs": []}}, "wake.source 'caller' is not one of"),
        ({"wake": {"source": "input"}}, "`wake.refs` is not a list of strings"),
        ({"prev": 5}, "`prev` is not a string or null"),
        ({"fingerprints": []}, "`fingerprints` is not an object"),
        ({"sig": None}, "`sig` is not an object"),
    ],
)
def test_a_receipt_that_is_not_one_is_named(change: dict[str, Any], expected: str) -> None:
    problem = receipt_problem({**_receipt("input", "rendered"), **change})
    assert problem is not None and problem.startswith(expected)


def test_a_missing_field_is_named() -> None:
    receipt = _receipt("input", "rendered")
    del receipt["contract_fingerprint"]
    assert receipt_problem(receipt) == "no `contract_fingerprint`"
    assert receipt_problem([receipt]) == "not a JSON object"


def _hashed_line(body: dict[str, Any]) -> bytes:
    return canonical_json({**body, "content_hash": token(body)})


def test_a_hashed_line_that_is_no_receipt_is_refused(tmp_path: Path) -> None:
    """Hashes prove a line unchanged, not that it is a receipt: every durable ledger
    (filesystem and the stored lines of the other backends) checks the shape too."""
    line = _hashed_line({"node": "a", "prev": None, "status": "rendered"})
    path = tmp_path / "state/world-model/a/receipts.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(line + b"\n")
    with pytest.raises(LedgerError, match=r"1: node a not a receipt: no `schema`"):
        load_ledger(path, node="a")
    with pytest.raises(BackendError, match=r"cannot be trusted.*not a receipt: no `schema`"):
        FilesystemBackend(tmp_path / "state").ledger("a")
    with pytest.raises(BackendError, match="not a receipt: no `schema`"):
        verify_stored("a", [line], "db#a")


def test_queued_wakes() -> None:
    assert wake_problem({"node": "a", "source": "self", "refs": []}) is None
    assert wake_problem({"node": "g", "source": "external", "refs": ["t"], "data": [1]}) is None
    assert wake_problem({"node": "a", "source": "input"}) is None  # refs may be left out
    assert wake_problem({"source": "self"}) == "no `node` name"
    assert wake_problem({"node": "a", "source": "tick"}) == (
        "source 'tick' is not one of input, self, external"
    )
    assert wake_problem({"node": "a", "source": "self", "refs": "r"}) == (
        "`refs` is not a list of strings"
    )


def test_pending_records() -> None:
    receipt = _receipt("input", "rendered")
    record = {"run_id": "r", "receipt": receipt, "version": None, "marker": "1→ a ✓ rendered"}
    assert pending_problem(record) is None
    assert pending_problem({**record, "version": "sha256:" + "2" * 64}) is None
    assert pending_problem({k: v for k, v in record.items() if k != "marker"}) == "no `marker`"
    assert pending_problem({**record, "version": 3}) == (
        "`version` is neither a content address nor null"
    )
    assert pending_problem({**record, "receipt": {"x": 1}}) == "receipt: no `schema`"


def test_a_wake_parses_its_source() -> None:
    assert Wake(source="self").source is WakeSource.SELF
    assert Wake(source="input", refs=["b", "a"]).refs == frozenset({"a", "b"})
    with pytest.raises(ValueError, match="'caller' is not a valid WakeSource"):
        Wake(source="caller")


def _project(tmp_path: Path) -> Project:
    doc = intent(
        {"g": {"wake_source": "external"}, "a": {}}, [("a", "g", "@atomic")], entry_points=["g"]
    )
    fixture = Project.create(tmp_path / "p", doc)
    fixture.world("g", {"v": 1})
    fixture.world("a", {"v": 1})
    return fixture


def test_the_engine_checks_queued_wakes(tmp_path: Path) -> None:
    project = open_project(_project(tmp_path).root)
    project.bind_renders({})
    run = project.create_run("run", [], [])
    project.backend.enqueue({"node": "g", "source": "external", "refs": ["t"], "data": [1]})
    summary = project.engine(EngineOptions(jobs=1)).reconcile(run, set(), {})
    assert summary.rendered == ["g", "a"]
    assert project.backend.get_value(external_key("g")) == {"data": [1]}
    project.backend.enqueue({"node": "a", "source": "caller", "refs": []})
    with pytest.raises(BackendError, match="queued wake for 'a' is malformed: source 'caller'"):
        project.engine(EngineOptions(jobs=1)).reconcile(run, set(), {})


def test_recovery_checks_pending_records(tmp_path: Path) -> None:
    fixture = _project(tmp_path)
    assert fixture.run()["failed"] == []
    pending = fixture.root / "state/world-model/a/pending.json"
    record = {"run_id": "r", "receipt": {"node": "a"}, "version": None, "marker": "m"}
    pending.write_text(json.dumps(record))
    result = fixture.prosec("run", ".")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "pending commit of 'a' is malformed: receipt: no `schema`" in result.stderr
