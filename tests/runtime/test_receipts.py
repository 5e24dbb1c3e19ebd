"""Receipts: hashes, chains, JSON Lines ledgers, torn lines, and the upstream fixtures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from prosec.runtime.receipts import (
    LedgerError,
    append_receipt,
    build_receipt,
    content_hash,
    load_ledger,
)
from prosec.runtime.schemas import validate
from prosec.runtime.verify import verify_path

from .conftest import upstream_fixtures

FIXTURES = ("inbox-triage", "contract-redline")


def make(node: str, prev: str | None, n: int) -> dict:
    return build_receipt(
        node=node,
        prev=prev,
        contract_fingerprint="sha256:" + "0" * 64,
        wake_source="input",
        wake_refs=[],
        input_fingerprints=[f"sha256:{n:064x}"],
        fingerprints={"@atomic": f"sha256:{n + 1:064x}"},
        status="rendered",
        semantic_diff={"changed": ["@atomic"]},
    )


def chain(path: Path, node: str, count: int) -> list[dict]:
    receipts, prev = [], None
    for n in range(count):
        receipt = make(node, prev, n)
        append_receipt(path, receipt)
        receipts.append(receipt)
        prev = receipt["content_hash"]
    return receipts


def test_built_receipts_are_schema_valid_and_hash_themselves(tmp_path: Path) -> None:
    receipt = make("a", None, 1)
    assert validate(receipt, "receipt.schema.json") == []
    assert receipt["content_hash"] == content_hash(receipt)


def test_ledger_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "receipts.jsonl"
    written = chain(path, "a", 4)
    assert load_ledger(path, node="a") == written


def test_torn_last_line_is_reported_not_used(tmp_path: Path) -> None:
    path = tmp_path / "receipts.jsonl"
    chain(path, "a", 2)
    with open(path, "ab") as handle:
        handle.write(b'{"content_hash":"sha256:12')
    with pytest.raises(LedgerError, match="torn last line"):
        load_ledger(path, node="a")


def test_broken_chain_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "receipts.jsonl"
    first = make("a", None, 1)
    append_receipt(path, first)
    append_receipt(path, make("a", None, 2))  # prev should be first's hash
    with pytest.raises(LedgerError, match="breaks the chain"):
        load_ledger(path, node="a")


@pytest.mark.parametrize("fixture", FIXTURES)
def test_upstream_fixtures_verify(fixture: str) -> None:
    report = verify_path(upstream_fixtures() / fixture)
    assert report.findings == ()
    assert report.receipts > 50 and report.versions > 20
    assert report.ok


@pytest.mark.parametrize("fixture", FIXTURES)
def test_tampered_upstream_receipt_is_located(fixture: str, tmp_path: Path) -> None:
    copy = tmp_path / fixture
    shutil.copytree(upstream_fixtures() / fixture, copy)
    path = copy / "receipts.json"
    receipts = json.loads(path.read_bytes())
    target = receipts[7]
    raw = path.read_bytes()
    needle = json.dumps(
        target["input_fingerprints"][0]
        if target["input_fingerprints"]
        else target["contract_fingerprint"]
    ).encode()
    at = raw.index(needle, raw.index(target["content_hash"].encode()))
    tampered = bytearray(raw)
    tampered[at + 10] = ord("0") if tampered[at + 10] != ord("0") else ord("1")
    path.write_bytes(bytes(tampered))
    report = verify_path(copy)
    assert not report.ok
    finding = report.findings[0]
    assert finding.position == "[7]"
    assert finding.node == target["node"]


def test_tampered_version_file_is_located(tmp_path: Path) -> None:
    copy = tmp_path / "fx"
    shutil.copytree(upstream_fixtures() / "inbox-triage", copy)
    victim = sorted(copy.rglob("versions/*.bin"))[3]
    data = bytearray(victim.read_bytes())
    data[-2] ^= 0x01
    victim.write_bytes(bytes(data))
    report = verify_path(copy)
    assert [f.file for f in report.findings] == [str(victim)]
    assert report.findings[0].node is not None and report.findings[0].node.count(".") == 1


def test_tampered_jsonl_ledger_byte(tmp_path: Path) -> None:
    path = tmp_path / "receipts.jsonl"
    chain(path, "node-x", 3)
    data = bytearray(path.read_bytes())
    second_line = data.index(b"\n") + 1
    at = data.index(b'"status":"rendered"', second_line) + 10
    data[at] = ord("R")
    path.write_bytes(bytes(data))
    report = verify_path(path)
    assert not report.ok
    assert {f.position for f in report.findings} == {"2"}
    assert all(f.node == "node-x" for f in report.findings)
