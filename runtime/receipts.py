"""Receipts: build and hash them, append them to ledgers, load and verify ledgers.

A receipt is the upstream envelope (schemas/receipt.schema.json). Its `content_hash` is
the token of the canonical JSON of the receipt without `content_hash`; `prev` chains the
receipts of one node. A ledger on disk is JSON Lines, one canonical receipt per line,
each line appended with fsync. A crash can tear only the last line; loading reports a
torn line instead of using it. `verify_*` functions return findings (empty = valid) and
point at the file, line (or array index) and node of every problem.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .canonical import (
    FrameError,
    canonical_json,
    decode_frame,
    encode_frame,
    sha256_token,
    token,
)
from .fsio import append_line
from .protocol import (
    Cost,
    Receipt,
    ReceiptBody,
    ReceiptStatus,
    SemanticDiff,
    Signature,
    WakeSource,
    is_receipt,
    receipt_problem,
)
from .userjson import JSONInputError, loads, read_limited

__all__ = [
    "Finding",
    "LedgerError",
    "build_receipt",
    "content_hash",
    "load_ledger",
    "verify_chain",
]

SCHEMA = "openprose.receipt"
NULL_SIG: Signature = {"null_reason": "no-signer-adapter-configured", "scheme": "none"}
_NODE_RE = re.compile(rb'"node":"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """A verification problem, located by file, position and (when known) node."""

    file: str
    position: str
    node: str | None
    message: str

    def __str__(self) -> str:
        node = f" node {self.node}" if self.node else ""
        return f"{self.file}:{self.position}:{node} {self.message}".replace(": ", ": ", 1)


class LedgerError(Exception):
    """A ledger that cannot be trusted (torn last line, broken hash or chain)."""

    def __init__(self, findings: Sequence[Finding]) -> None:
        super().__init__("; ".join(str(f) for f in findings))
        self.findings = tuple(findings)


def content_hash(receipt: Mapping[str, Any]) -> str:
    """The content hash of a receipt (computed without its own `content_hash` field)."""
    body = {key: value for key, value in receipt.items() if key != "content_hash"}
    return token(body)


def build_receipt(
    *,
    node: str,
    prev: str | None,
    contract_fingerprint: str,
    wake_source: WakeSource,
    wake_refs: Iterable[str],
    input_fingerprints: Iterable[str],
    fingerprints: Mapping[str, str],
    status: ReceiptStatus,
    semantic_diff: SemanticDiff | None = None,
    cost: Cost | None = None,
) -> Receipt:
    """Build a complete receipt, `content_hash` included."""
    free: Cost = {
        "model": "none",
        "provider": "none",
        "surprise_cause": wake_source,
        "tokens": {"fresh": 0, "reused": 0},
    }
    body: ReceiptBody = {
        "schema": SCHEMA,
        "hash_algorithm": "sha256",
        "node": node,
        "prev": prev,
        "contract_fingerprint": contract_fingerprint,
        "wake": {"source": wake_source, "refs": sorted(set(wake_refs))},
        "input_fingerprints": list(input_fingerprints),
        "fingerprints": dict(fingerprints),
        "semantic_diff": semantic_diff.copy() if semantic_diff else {},
        "status": status,
        "cost": cost.copy() if cost else free,
        "sig": NULL_SIG.copy(),
    }
    return {**body, "content_hash": content_hash(body)}


def receipt_line(receipt: Receipt) -> bytes:
    """The ledger line of a receipt: its canonical JSON."""
    return canonical_json(dict(receipt))


def append_receipt(path: Path, receipt: Receipt, *, durable: bool = True) -> None:
    """Append one receipt to a JSON Lines ledger with fsync (`durable=False`: a group
    commit's, synced with the whole group)."""
    append_line(path, receipt_line(receipt), durable=durable)


# ---------------------------------------------------------------------------------------
# Loading and verification
# ---------------------------------------------------------------------------------------


def _guess_node(raw: bytes) -> str | None:
    match = _NODE_RE.search(raw)
    if match is None:
        return None
    try:
        value = json.loads(b'"' + match.group(1) + b'"')
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return value if isinstance(value, str) else None


def parse_ledger(path: Path, data: bytes) -> tuple[list[dict[str, Any]], list[Finding]]:
    """Parse JSON Lines bytes into receipts; findings for torn/bad lines (never used)."""
    receipts, findings, _ = parse_ledger_hashed(path, data)
    return receipts, findings


def parse_ledger_hashed(
    path: Path, data: bytes
) -> tuple[list[dict[str, Any]], list[Finding], list[str]]:
    """parse_ledger, plus each receipt's recomputed content hash (for verify_chain)."""
    parsed = parse_jsonl(str(path), data)
    return parsed.receipts, parsed.findings, parsed.hashes


@dataclass(slots=True)
class ParsedLedger:
    """Receipts parsed from stored lines: each with its position and recomputed hash;
    lines that are not receipts are findings, never receipts."""

    receipts: list[dict[str, Any]] = field(default_factory=list)
    positions: list[str] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    torn: Finding | None = None  # the torn last line's finding (also in `findings`)


def parse_jsonl(file: str, data: bytes) -> ParsedLedger:
    """Parse a JSON Lines ledger (positions are line numbers; a torn last line is a
    finding)."""
    if not data:
        return ParsedLedger()
    lines = data.split(b"\n")
    offsets = [0]
    for raw in lines[:-1]:
        offsets.append(offsets[-1] + len(raw) + 1)
    numbered = [(str(number), raw) for number, raw in enumerate(lines[:-1], start=1)]
    parsed = parse_lines(file, numbered, offsets=offsets)
    if lines[-1] != b"":
        parsed.torn = Finding(
            file=file,
            position=f"{len(lines)}",
            node=_guess_node(lines[-1]),
            message=(
                f"torn last line ({len(lines[-1])} bytes without a newline at byte "
                f"{offsets[-1]}): an interrupted append; it is not used"
            ),
        )
        parsed.findings.append(parsed.torn)
    return parsed


def parse_lines(
    file: str, lines: Sequence[tuple[str, bytes]], *, offsets: Sequence[int] | None = None
) -> ParsedLedger:
    """Parse stored receipt lines, each given with its position (a line number, a row
    id): strict JSON objects in canonical form. `offsets` (byte offsets of the lines in
    a file) make the messages say which bytes."""
    parsed = ParsedLedger()

    def span(index: int, raw: bytes) -> str:  # only built for a finding
        return f"bytes {offsets[index]}..{offsets[index] + len(raw)}" if offsets else "line"

    for index, (where, raw) in enumerate(lines):
        try:
            receipt = loads(raw, source="")
            if not isinstance(receipt, dict):
                raise JSONInputError("not a JSON object")
        except JSONInputError as exc:
            parsed.findings.append(
                Finding(
                    file=file,
                    position=where,
                    node=_guess_node(raw),
                    message=f"line is not a JSON receipt: {span(index, raw)}: {exc}",
                )
            )
            continue
        fields = {key: value for key, value in receipt.items() if key != "content_hash"}
        body_bytes = canonical_json(fields)
        computed = sha256_token(body_bytes)
        # When "content_hash" sorts first (it does in the envelope), the canonical line
        # derives from the body's canonical bytes: one serialization checks form and hash.
        stated = receipt.get("content_hash")
        if isinstance(stated, str) and fields and all(k > "content_hash" for k in fields):
            expected = b'{"content_hash":' + canonical_json(stated) + b"," + body_bytes[1:]
        else:
            expected = canonical_json(receipt)
        if expected != raw:
            parsed.findings.append(
                Finding(
                    file=file,
                    position=where,
                    node=_str(receipt.get("node")),
                    message=f"line is not in canonical JSON form ({span(index, raw)})",
                )
            )
        parsed.receipts.append(receipt)
        parsed.positions.append(where)
        parsed.hashes.append(computed)
    return parsed


def verify_node_chain(
    file: str, node: str, parsed: ParsedLedger
) -> tuple[list[Receipt], list[Finding]]:
    """The checks of a durable per-node ledger after parsing: every hash recomputes, the
    chain starts at null and holds, every receipt is `node`'s and has the envelope's
    shape. Returns the typed receipts and every finding (parse findings included)."""
    findings = list(parsed.findings)
    chain, _ = verify_chain(
        parsed.receipts,
        file=file,
        positions=parsed.positions,
        heads={node: None},
        computed=parsed.hashes,
    )
    findings += chain
    findings += [
        Finding(file=file, position=where, node=_str(r.get("node")), message="foreign node")
        for where, r in zip(parsed.positions, parsed.receipts, strict=True)
        if r.get("node") != node
    ]
    typed, shapes = typed_receipts(parsed.receipts, file=file, positions=parsed.positions)
    return typed, findings + shapes


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def verify_chain(
    receipts: Sequence[Mapping[str, Any]],
    *,
    file: str,
    positions: Sequence[str] | None = None,
    heads: Mapping[str, str | None] | None = None,
    computed: Sequence[str] | None = None,
) -> tuple[list[Finding], dict[str, str]]:
    """Check every content hash and every per-node `prev` chain.

    `heads` gives the expected `prev` of each node's first receipt (None = must be
    null); a node absent from `heads` accepts any first `prev` (a run ledger that
    continues a durable chain). Returns findings and the last hash per node.
    """
    findings: list[Finding] = []
    last: dict[str, str] = {}
    for index, receipt in enumerate(receipts):
        position = positions[index] if positions is not None else f"[{index}]"
        node = _str(receipt.get("node"))
        stated = receipt.get("content_hash")
        actual = computed[index] if computed is not None else content_hash(receipt)
        if stated != actual:
            findings.append(
                Finding(
                    file=file,
                    position=position,
                    node=node,
                    message=f"content_hash {stated} does not match the receipt ({actual})",
                )
            )
        if node is None:
            findings.append(Finding(file=file, position=position, node=None, message="no node"))
            continue
        prev = receipt.get("prev")
        if node in last:
            expected: str | None = last[node]
            check = True
        elif heads is not None and node in heads:
            expected = heads[node]
            check = True
        else:
            expected, check = None, False
        if check and prev != expected:
            findings.append(
                Finding(
                    file=file,
                    position=position,
                    node=node,
                    message=f"prev {prev} breaks the chain (expected {expected})",
                )
            )
        last[node] = stated if isinstance(stated, str) else actual
    return findings, last


def load_ledger(path: Path, *, node: str | None = None, torn_ok: bool = False) -> list[Receipt]:
    """Load a JSON Lines ledger, verifying hashes and chain; raise LedgerError on any problem.

    With `node`, the ledger is a durable per-node ledger: every receipt must be that
    node's and the chain must start at null. With `torn_ok`, a torn last line (an
    append a crash cut: never committed) is left out instead of refused; the next
    runner repairs it (`repair_torn_tail`).
    """
    if not path.exists() and not path.is_symlink():
        return []
    try:  # a regular file only (a FIFO would block)
        data = read_limited(path, 1 << 62, what="")
    except JSONInputError as exc:
        found = Finding(file=str(path), position="-", node=node, message=str(exc))
        raise LedgerError([found]) from None
    parsed = parse_jsonl(str(path), data)
    if torn_ok and parsed.torn is not None:
        parsed.findings.remove(parsed.torn)
    if node is not None:
        typed, findings = verify_node_chain(str(path), node, parsed)
    else:
        chain, _ = verify_chain(
            parsed.receipts,
            file=str(path),
            positions=parsed.positions,
            computed=parsed.hashes,
        )
        typed, shapes = typed_receipts(parsed.receipts, file=str(path), positions=parsed.positions)
        findings = parsed.findings + chain + shapes
    if findings:
        raise LedgerError(findings)
    return typed


def typed_receipts(
    receipts: Sequence[Mapping[str, Any]], *, file: str, positions: Sequence[str]
) -> tuple[list[Receipt], list[Finding]]:
    """The receipts that have the envelope's shape, and a finding for each that has not
    (a ledger's hashes prove its lines unchanged, not that they are receipts)."""
    typed: list[Receipt] = []
    findings: list[Finding] = []
    for position, receipt in zip(positions, receipts, strict=True):
        if is_receipt(receipt):
            typed.append(receipt)
        else:
            findings.append(
                Finding(
                    file=file,
                    position=position,
                    node=_str(receipt.get("node")),
                    message=f"not a receipt: {receipt_problem(receipt)}",
                )
            )
    return typed, findings


def verify_receipts_array(path: Path) -> tuple[list[Finding], int]:
    """Verify an upstream `receipts.json` (a canonical JSON array plus a newline)."""
    data = path.read_bytes()
    try:
        receipts = loads(data, source="file")
    except JSONInputError as exc:
        return [Finding(file=str(path), position="0", node=None, message=str(exc))], 0
    if not isinstance(receipts, list):
        return [Finding(file=str(path), position="0", node=None, message="not an array")], 0
    findings, _ = verify_chain(receipts, file=str(path), heads=_NullHeads())
    if canonical_json(receipts) + b"\n" != data:
        findings.append(
            Finding(
                file=str(path),
                position=_first_difference(canonical_json(receipts) + b"\n", data),
                node=None,
                message="file is not the canonical JSON form of its receipts",
            )
        )
    return findings, len(receipts)


class _NullHeads(dict[str, None]):
    """Heads mapping under which every node's chain must start at null."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> None:
        return None


def _first_difference(expected: bytes, actual: bytes) -> str:
    for index, (a, b) in enumerate(zip(expected, actual, strict=False)):
        if a != b:
            return f"byte {index}"
    return f"byte {min(len(expected), len(actual))}"


_ADDRESS = re.compile(r"sha256:[0-9a-f]{64}")


def verify_version_file(path: Path) -> list[Finding]:
    """Verify a `sha256_<hex>.bin` OPWM1 frame: hash matches its name and it round-trips."""
    match = re.fullmatch(r"sha256_([0-9a-f]{64})\.bin", path.name)
    if match is None:
        return [Finding(file=str(path), position="name", node=None, message="not a version name")]
    return verify_frame(path.read_bytes(), f"sha256:{match.group(1)}", file=str(path))


def verify_frame(
    data: bytes | None, address: str, *, file: str, position: str = "0", node: str | None = None
) -> list[Finding]:
    """Verify a stored version: it hashes to `address`, decodes as an OPWM1 frame and
    re-encodes byte-identically."""

    def finding(where: str, message: str) -> Finding:
        return Finding(file=file, position=where, node=node, message=message)

    if not _ADDRESS.fullmatch(address):
        return [finding(position, f"{address!r} is not a sha256 content address")]
    if data is None:
        return [finding(position, f"version {address} holds no bytes")]
    findings: list[Finding] = []
    actual = sha256_token(data)
    if actual != address:
        findings.append(finding(position, f"content hashes to {actual}"))
    try:
        files = decode_frame(data)
    except (FrameError, ValueError) as exc:
        offset = getattr(exc, "offset", 0)
        findings.append(finding(f"byte {offset}", f"{exc}"))
        return findings
    if encode_frame(files) != data:
        findings.append(finding(position, "does not re-encode identically"))
    return findings


def iter_version_files(root: Path) -> Iterator[Path]:
    """Every `versions/*.bin` under a directory, in sorted order."""
    yield from sorted(root.rglob("versions/*.bin"))
