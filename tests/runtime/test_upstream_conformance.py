"""Conformance: the real upstream reactor fixtures and reference vectors (`make conformance`).

Our own copies of these facts live in tests/data/vectors.json and drive the fast tier;
these tests check that those copies agree with the upstream originals, and run the
receipt and frame checks over the real upstream files.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from prosec.runtime import canonical
from prosec.runtime.canonical import canonical_json, decode_frame, encode_frame
from prosec.runtime.verify import verify_path

from ..conftest import DATA
from .upstream_ledger import layout, tamper_receipt, tamper_version

pytestmark = pytest.mark.conformance

FIXTURES = ("inbox-triage", "contract-redline")
OURS: dict[str, Any] = json.loads((DATA / "vectors.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def fixtures(upstream: Path) -> Path:
    path = upstream / "packages" / "reactor-devtools" / "fixtures"
    assert path.is_dir(), f"{path} is missing from UPSTREAM"
    return path


def test_our_canonical_vectors_are_the_reference_ones(reference_vectors: dict[str, Any]) -> None:
    theirs = sorted(v["expect"] for v in reference_vectors["canonical_json"])
    ours = sorted(v["canonical"] for v in OURS["canonical_json"])
    assert ours == theirs
    for vector in reference_vectors["canonical_json"]:  # each expect is canonical
        expected = vector["expect"].encode("utf-8", "surrogatepass")
        assert canonical_json(json.loads(vector["expect"])) == expected


def test_our_receipt_vectors_are_the_reference_ones(reference_vectors: dict[str, Any]) -> None:
    def facts(body: Any, text: str, digest: str) -> tuple[bytes, str, str]:
        return canonical_json(body), text, digest

    theirs = sorted(
        facts(v["receipt_without_content_hash"], v["expect_canonical"], v["expect_content_hash"])
        for v in reference_vectors["receipts"]
    )
    ours = sorted(
        facts(v["receipt"], v["canonical"], v["content_hash"]) for v in OURS["receipt_hashes"]
    )
    assert ours == theirs


def test_our_frame_vectors_are_the_reference_ones(reference_vectors: dict[str, Any]) -> None:
    theirs = sorted(
        (canonical_json(v["files"]), v["expect_frame_hex"], v["expect_address"])
        for v in reference_vectors["artifacts"]
    )
    ours = sorted(
        (canonical_json(v["files"]), v["frame_hex"], v["address"]) for v in OURS["frames"]
    )
    assert ours == theirs


def test_reference_values_from_their_python_repr(reference_vectors: dict[str, Any]) -> None:
    for vector in reference_vectors["canonical_json"]:
        value = eval(vector["value_python_repr"])  # the recorded reference data, trusted
        expected = vector["expect"]
        if vector["name"].startswith("string escapes"):
            # This repr carries a space where its expect carries U+007F U+2028 (both raw);
            # our vector writes both characters in its input.
            expected = expected.replace("\x7f\u2028", " ")
        assert canonical_json(value) == expected.encode("utf-8", "surrogatepass"), vector["name"]


def test_the_ledger_layout_facts_hold(fixtures: Path) -> None:
    facts = layout()
    for fact in facts["node_directories"]:
        directory = fixtures / fact["fixture"] / "world-models" / fact["directory"]
        assert directory.is_dir() and fact["node"].encode().hex() == fact["directory"]
    for name in FIXTURES:
        ledger = (fixtures / name / facts["ledger_file"]).read_bytes()
        assert ledger == canonical_json(json.loads(ledger)) + facts["ledger_trailer"].encode()
        receipts = json.loads(ledger)
        first: dict[str, Any] = {}
        for receipt in receipts:
            first.setdefault(receipt["node"], receipt)
        assert all(receipt["prev"] is None for receipt in first.values())


@pytest.mark.parametrize("fixture", FIXTURES)
def test_upstream_fixtures_verify(fixtures: Path, fixture: str) -> None:
    report = verify_path(fixtures / fixture)
    assert report.findings == ()
    assert report.receipts > 50 and report.versions > 20
    assert report.ok


@pytest.mark.parametrize("fixture", FIXTURES)
def test_tampered_upstream_receipt_is_located(fixtures: Path, fixture: str, tmp_path: Path) -> None:
    copy = tmp_path / fixture
    shutil.copytree(fixtures / fixture, copy)
    target = tamper_receipt(copy / "receipts.json", 7)
    report = verify_path(copy)
    assert not report.ok
    finding = report.findings[0]
    assert finding.position == "[7]"
    assert finding.node == target["node"]


def test_tampered_upstream_version_file_is_located(fixtures: Path, tmp_path: Path) -> None:
    copy = tmp_path / "fx"
    shutil.copytree(fixtures / "inbox-triage", copy)
    victim = tamper_version(copy)
    report = verify_path(copy)
    assert [f.file for f in report.findings] == [str(victim)]
    assert report.findings[0].node is not None and report.findings[0].node.count(".") == 1


def test_upstream_version_files_round_trip(fixtures: Path) -> None:
    bins = sorted(fixtures.rglob("versions/*.bin"))
    assert len(bins) >= 70
    for path in bins:
        data = path.read_bytes()
        assert canonical.sha256_token(data) == "sha256:" + path.stem.removeprefix("sha256_")
        assert encode_frame(decode_frame(data)) == data
