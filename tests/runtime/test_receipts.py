"""Receipts: hashes, chains, JSON Lines ledgers, torn lines, and upstream-shaped ledgers
(the real upstream fixtures are checked in test_upstream_conformance.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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

from .upstream_ledger import tamper_receipt, tamper_version, write_upstream_ledger


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


@pytest.fixture
def ledger(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """An upstream-shaped fixture directory and its receipts."""
    root = tmp_path / "fixture"
    return root, write_upstream_ledger(root)


def test_upstream_shaped_fixture_verifies(ledger: tuple[Path, list[dict[str, Any]]]) -> None:
    root, receipts = ledger
    assert json.loads((root / "receipts.json").read_bytes()) == receipts
    report = verify_path(root)
    assert report.findings == ()
    assert (report.ledgers, report.receipts, report.versions) == (1, 15, 14)
    assert report.ok


def test_tampered_upstream_shaped_receipt_is_located(
    ledger: tuple[Path, list[dict[str, Any]]],
) -> None:
    root, _ = ledger
    target = tamper_receipt(root / "receipts.json", 7)
    report = verify_path(root)
    assert not report.ok
    finding = report.findings[0]
    assert finding.position == "[7]"
    assert finding.node == target["node"]


def test_tampered_version_file_is_located(ledger: tuple[Path, list[dict[str, Any]]]) -> None:
    root, _ = ledger
    victim = tamper_version(root)
    report = verify_path(root)
    assert [f.file for f in report.findings] == [str(victim)]
    assert report.findings[0].node is not None and report.findings[0].node.count(".") == 1


def test_a_ledger_file_not_in_canonical_form_is_reported(
    ledger: tuple[Path, list[dict[str, Any]]],
) -> None:
    root, receipts = ledger
    (root / "receipts.json").write_text(json.dumps(receipts) + "\n")  # same data, spaced
    report = verify_path(root)
    assert [f.message for f in report.findings] == [
        "file is not the canonical JSON form of its receipts"
    ]


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
