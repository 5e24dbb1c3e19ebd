"""The checks `prosec receipts verify` runs over one durable store, whatever holds it.

A store (backends/audit.py: a `state/` folder, a SQLite file, a PostgreSQL schema) is
checked record by record, and every problem is a Finding with its place:

* each node's ledger parses (strict JSON, canonical form), every `content_hash`
  recomputes, the `prev` chain starts at null and holds, every receipt is the node's
  and has the envelope's shape, and a table's projected columns agree with the line;
* each version blob hashes to its address, decodes and re-encodes byte-identically;
* each published version names a blob the store holds, published files (when the
  store keeps them) hash to it, and it is the version of the node's last `rendered`
  receipt: its truth, fingerprinted with that receipt's canonicalizer, gives that
  receipt's fingerprints. A ledger that lost its newest receipts fails here, even when
  the chain that is left is intact;
* every write-ahead record is readable (a commit cut by a crash is rolled forward by
  the next command; its node's published version is not judged until then).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .backends.audit import StoreAudit, StoredLedger, StoredPublished
from .canonical import content_address, decode_frame, sha256_token
from .canonicalizer import ATOMIC, CanonicalizerSpec, fingerprint
from .receipts import Finding, parse_jsonl, parse_lines, verify_frame, verify_node_chain
from .truth import build_truth
from .userjson import JSONInputError, read_file

__all__ = ["SpecIndex", "StoreReport", "audit_store"]

_ADDRESS = re.compile(r"sha256:[0-9a-f]{64}")
_MANIFEST_LIMIT = 256 << 20
Spec = tuple[CanonicalizerSpec, tuple[str, ...]]


@dataclass(slots=True)
class StoreReport:
    """What one store held and every finding; `hashes` (node → content hashes) lets run
    ledgers be checked against the durable chains."""

    ledgers: int = 0
    receipts: int = 0
    versions: int = 0
    findings: list[Finding] = field(default_factory=list)
    hashes: dict[str, set[str]] = field(default_factory=dict)


class SpecIndex:
    """The canonicalizer of each (node, contract fingerprint), from a root's compiled
    intents: the active manifest first, then each run's snapshot, newest first; read
    only when a lookup needs them."""

    def __init__(self, root: Path | None) -> None:
        self._pending: list[Path] = []
        if root is not None:
            self._pending.append(root / "dist" / "manifest.active.json")
            runs = root / "runs"
            if runs.is_dir():
                snapshots = sorted(runs.glob("*/compiled-intent.json"), reverse=True)
                self._pending.extend(snapshots)
        self._known: dict[tuple[str, str], Spec] = {}

    def lookup(self, node: str, contract: str) -> Spec | None:
        while (node, contract) not in self._known and self._pending:
            self._known.update(_specs_of(self._pending.pop(0)))
        return self._known.get((node, contract))


def _specs_of(path: Path) -> Iterator[tuple[tuple[str, str], Spec]]:
    """Every canonicalizer a compiled intent file holds, skipping what cannot be read."""
    try:
        doc = read_file(path, _MANIFEST_LIMIT)
    except JSONInputError:
        return
    if not isinstance(doc, dict):
        return
    fingerprints = doc.get("contract_fingerprints")
    canonicalizers = doc.get("canonicalizers")
    if not isinstance(fingerprints, dict) or not isinstance(canonicalizers, list):
        return
    for entry in canonicalizers:
        if not isinstance(entry, dict):
            continue
        node, facets = entry.get("node"), entry.get("facets", [])
        if not isinstance(node, str) or not isinstance(facets, list):
            continue
        contract = fingerprints.get(node)
        if not isinstance(contract, str):
            continue
        try:
            spec = CanonicalizerSpec.from_json(entry.get("spec", {}))
        except (ValueError, TypeError):
            continue
        names = tuple(dict.fromkeys([ATOMIC, *(f for f in facets if isinstance(f, str))]))
        yield (node, contract), (spec, names)


def audit_store(store: StoreAudit, specs: SpecIndex) -> StoreReport:
    """Check every record of `store` (see the module docstring)."""
    report = StoreReport()
    chains: dict[str, list[dict[str, Any]]] = {}
    broken: set[str] = set()  # nodes whose ledger has findings: not judged again below
    for ledger in store.ledgers():
        before = len(report.findings)
        chains[ledger.node] = _check_ledger(ledger, report)
        if len(report.findings) > before:
            broken.add(ledger.node)
    for version in store.versions():
        report.versions += 1
        report.findings += verify_frame(
            version.frame,
            version.address,
            file=version.file,
            position=version.position,
            node=version.node,
        )
    pending = store.pending_heads()
    for node, head in sorted(pending.items()):
        if head is None:
            report.findings.append(
                Finding(
                    file=store.where,
                    position="pending",
                    node=node,
                    message="the write-ahead record of an interrupted commit cannot be read",
                )
            )
    published: set[str] = set()
    for entry in store.published():
        published.add(entry.node)
        chain = chains.get(entry.node, [])
        cut = entry.node in pending and (
            pending[entry.node] is None or _head(chain) == pending[entry.node]
        )
        judge = not cut and entry.node not in broken
        report.findings += _check_published(store, entry, chain, specs, judge_head=judge)
    for node, chain in sorted(chains.items()):
        rendered = _last_rendered(chain)
        interrupted = node in pending and _head(chain) == pending[node]
        if rendered is not None and node not in published | broken and not interrupted:
            report.findings.append(
                Finding(
                    file=store.where,
                    position="published",
                    node=node,
                    message=(
                        f"the last rendered receipt {rendered.get('content_hash')} has no "
                        "published version"
                    ),
                )
            )
    return report


def _check_ledger(ledger: StoredLedger, report: StoreReport) -> list[dict[str, Any]]:
    report.ledgers += 1
    if ledger.problem is not None:
        report.findings.append(
            Finding(file=ledger.file, position="-", node=ledger.node, message=ledger.problem)
        )
        return []
    if ledger.rows is None:
        parsed = parse_jsonl(ledger.file, ledger.data)
    else:
        parsed = parse_lines(ledger.file, ledger.rows)
    _, findings = verify_node_chain(ledger.file, ledger.node, parsed)
    report.findings += findings
    report.receipts += len(parsed.receipts)
    report.hashes.setdefault(ledger.node, set()).update(
        str(r.get("content_hash")) for r in parsed.receipts
    )
    if ledger.rows is not None and ledger.columns:
        columns = dict(zip((where for where, _ in ledger.rows), ledger.columns, strict=True))
        for where, receipt in zip(parsed.positions, parsed.receipts, strict=True):
            report.findings += _check_columns(ledger, where, receipt, columns[where])
    return parsed.receipts


def _check_columns(
    ledger: StoredLedger, where: str, receipt: Mapping[str, Any], columns: Mapping[str, Any]
) -> Iterator[Finding]:
    """A table's projected columns must say what the receipt line says."""
    for name, value in sorted(columns.items()):
        if receipt.get(name) != value:
            yield Finding(
                file=ledger.file,
                position=where,
                node=ledger.node,
                message=f"column {name} holds {value!r} but the receipt line says "
                f"{receipt.get(name)!r}",
            )


def _head(chain: list[dict[str, Any]]) -> str | None:
    return str(chain[-1].get("content_hash")) if chain else None


def _last_rendered(chain: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((r for r in reversed(chain) if r.get("status") == "rendered"), None)


def _check_published(
    store: StoreAudit,
    entry: StoredPublished,
    chain: list[dict[str, Any]],
    specs: SpecIndex,
    *,
    judge_head: bool,
) -> list[Finding]:
    def finding(message: str) -> Finding:
        return Finding(file=entry.file, position=entry.position, node=entry.node, message=message)

    if entry.problem is not None:
        return [finding(entry.problem)]
    address = entry.address
    if not _ADDRESS.fullmatch(address):
        return [finding(f"{address!r} is not a sha256 content address")]
    findings = []
    files = entry.files
    if files is not None:
        try:
            actual = content_address(files)
        except ValueError as exc:  # colliding or non-UTF-8 names, paths that climb out
            findings.append(finding(f"published files cannot be addressed: {exc}"))
            files = None
        else:
            if actual != address:
                findings.append(
                    finding(f"published files hash to {actual}, not the recorded {address}")
                )
                files = None
    frame = store.frame(entry.node, address)
    if frame is None:
        findings.append(
            finding(f"the published version {address} is missing from the stored versions")
        )
    elif sha256_token(frame) != address:
        frame = None  # a corrupt blob (reported with the versions): judge by the files
    if not judge_head:
        return findings
    rendered = _last_rendered(chain)
    if rendered is None:
        return [
            *findings,
            finding(f"version {address} is published but the ledger has no rendered receipt"),
        ]
    problem = _matches(entry.node, rendered, frame, files, address, specs)
    return findings + ([finding(problem)] if problem else [])


def _matches(
    node: str,
    rendered: Mapping[str, Any],
    frame: bytes | None,
    files: Mapping[str, bytes] | None,
    address: str,
    specs: SpecIndex,
) -> str | None:
    """Why the published version is not the one the last rendered receipt signed (None
    when it is, or when no compiled intent holds that receipt's canonicalizer)."""
    found = specs.lookup(node, str(rendered.get("contract_fingerprint")))
    if found is None:
        return None
    spec, facets = found
    try:
        content = decode_frame(frame) if frame is not None else files
        if content is None:
            return None
        tokens = fingerprint(spec, build_truth(content).value, facets, finite=True)
    except (ValueError, RecursionError) as exc:
        return f"the published version {address} has no readable truth: {exc}"
    if tokens != rendered.get("fingerprints"):
        return (
            f"the published version {address} is not the one the last rendered receipt "
            f"{rendered.get('content_hash')} signed (its fingerprints differ): newer "
            "receipts are missing from the ledger, or the version was replaced"
        )
    return None
