"""`prosec receipts verify`: find every ledger and version file under a path and check it.

Understands prosec run directories (`receipts/*.jsonl`), durable state
(`state/world-model/*/receipts.jsonl`, `versions/*.bin`), single `.jsonl` ledgers,
upstream `receipts.json` arrays and upstream `world-models/*/versions/*.bin` frames.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from .canonical import content_address
from .fsio import PathEscapeError, read_tree
from .receipts import (
    Finding,
    iter_version_files,
    parse_ledger,
    verify_chain,
    verify_receipts_array,
    verify_version_file,
)

__all__ = ["VerifyReport", "verify_path"]


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifyReport:
    """What was checked and every finding."""

    ledgers: int = 0
    receipts: int = 0
    versions: int = 0
    findings: tuple[Finding, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not self.findings and (self.ledgers + self.versions) > 0


def _node_of_versions(path: Path) -> str | None:
    owner = path.parent.parent.name
    try:
        decoded = bytes.fromhex(owner).decode("utf-8")
    except ValueError:
        return owner
    return decoded if decoded.isprintable() else owner


def _check_published(marker: Path) -> list[Finding]:
    """A published folder's files must hash to the address in its `.version`."""
    directory = marker.parent
    node = directory.parent.name if directory.name == "published" else directory.name
    stated = marker.read_text(encoding="utf-8", errors="replace").strip()
    try:
        files = read_tree(directory)
    except PathEscapeError as exc:
        return [Finding(file=str(directory), position="-", node=node, message=str(exc))]
    files.pop(".version", None)
    actual = content_address(files)
    if actual != stated:
        return [
            Finding(
                file=str(directory),
                position=".version",
                node=node,
                message=f"published files hash to {actual}, not the recorded {stated}",
            )
        ]
    return []


def _cross_check(
    run_ledgers: list[tuple[Path, list[dict[str, object]]]], durable: dict[str, set[str]]
) -> list[Finding]:
    """Every receipt of a run ledger must also be in its node's durable ledger."""
    findings = []
    for path, items in run_ledgers:
        node = path.stem
        if node not in durable:
            continue
        for index, receipt in enumerate(items, start=1):
            if str(receipt.get("content_hash")) not in durable[node]:
                findings.append(
                    Finding(
                        file=str(path),
                        position=str(index),
                        node=node,
                        message="receipt is missing from the durable ledger",
                    )
                )
    return findings


def verify_path(target: Path) -> VerifyReport:
    """Verify everything verifiable under `target` (a directory or a single file)."""
    ledgers = receipts = versions = 0
    findings: list[Finding] = []

    durable_hashes: dict[str, set[str]] = {}
    run_ledgers: list[tuple[Path, list[dict[str, object]]]] = []

    def ledger(path: Path, durable: bool) -> None:
        nonlocal ledgers, receipts
        items, problems = parse_ledger(path, path.read_bytes())
        if durable and path.parent.parent.name == "world-model":
            durable_hashes[path.parent.name] = {str(r.get("content_hash")) for r in items}
        elif path.parent.name == "receipts":
            run_ledgers.append((path, list(items)))
        positions = [str(i) for i in range(1, len(items) + 1)]
        heads: dict[str, str | None] | None = None
        if durable and items and isinstance(items[0].get("node"), str):
            heads = {items[0]["node"]: None}
        chain, _ = verify_chain(items, file=str(path), positions=positions, heads=heads)
        findings.extend(problems + chain)
        ledgers += 1
        receipts += len(items)

    def version(path: Path) -> None:
        nonlocal versions
        node = _node_of_versions(path)
        findings.extend(
            dataclasses.replace(f, node=f.node or node) for f in verify_version_file(path)
        )
        versions += 1

    if target.is_file():
        if target.suffix == ".bin":
            version(target)
        elif target.suffix == ".jsonl":
            ledger(target, durable=target.name == "receipts.jsonl")
        else:
            problems, count = verify_receipts_array(target)
            findings += problems
            ledgers, receipts = 1, count
    elif target.is_dir():
        for path in sorted(target.rglob("*.jsonl")):
            if path.parent.name == "receipts" or path.name == "receipts.jsonl":
                ledger(path, durable=path.name == "receipts.jsonl")
        for path in sorted(target.rglob("receipts.json")):
            problems, count = verify_receipts_array(path)
            findings += problems
            ledgers += 1
            receipts += count
        for path in iter_version_files(target):
            version(path)
        for marker in sorted(target.rglob(".version")):
            findings.extend(_check_published(marker))
        findings.extend(_cross_check(run_ledgers, durable_hashes))
    else:
        findings.append(Finding(file=str(target), position="-", node=None, message="no such path"))
    return VerifyReport(
        ledgers=ledgers, receipts=receipts, versions=versions, findings=tuple(findings)
    )
