"""A small fixture in the upstream reactor layout, written with prosec's own code.

The layout facts come from `tests/data/vectors.json` (`upstream_ledger`): one
`receipts.json` array in canonical JSON plus LF, and each node's world-model versions as
OPWM1 frames under `world-models/<node id as UTF-8 hex>/versions/sha256_<hex>.bin`.
Three nodes (a gateway, two responsibilities) go through five waves; the digest skips
one wave, so the ledger has 15 receipts and 14 versions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prosec.runtime.canonical import canonical_json, encode_frame, sha256_token
from prosec.runtime.receipts import build_receipt

from ..conftest import DATA

NODES = ("gateway.mail-feed", "responsibility.triage", "responsibility.digest")
WAVES = 5
SKIPPED = {(3, "responsibility.digest")}


def layout() -> dict[str, Any]:
    facts: dict[str, Any] = json.loads((DATA / "vectors.json").read_text(encoding="utf-8"))
    return dict(facts["upstream_ledger"])


def write_upstream_ledger(root: Path) -> list[dict[str, Any]]:
    """Write the fixture under `root` and return its receipts in ledger order."""
    facts = layout()
    receipts: list[dict[str, Any]] = []
    heads: dict[str, str | None] = dict.fromkeys(NODES)
    published: dict[str, str] = {}
    for wave in range(WAVES):
        upstream: str | None = None
        for node in NODES:
            skipped = (wave, node) in SKIPPED
            if not skipped:
                truth = {
                    "node": node,
                    "wave": wave,
                    "items": [f"{node}-{wave}-{n}" for n in range(3)],
                }
                frame = encode_frame({"truth.json": canonical_json(truth)})
                published[node] = sha256_token(frame)
                name = facts["version_name"].format(hex=published[node].removeprefix("sha256:"))
                versions = root / "world-models" / node.encode().hex() / "versions"
                versions.mkdir(parents=True, exist_ok=True)
                (versions / name).write_bytes(frame)
                (versions.parent / "published.json").write_bytes(
                    canonical_json({"version": published[node], "fingerprints": {}})
                )
            receipt = build_receipt(
                node=node,
                prev=heads[node],
                contract_fingerprint=sha256_token(node.encode()),
                wake_source="external" if upstream is None else "input",
                wake_refs=[] if upstream is None else [upstream],
                input_fingerprints=[] if upstream is None else [upstream],
                fingerprints={"@atomic": published[node]},
                status="skipped" if skipped else "rendered",
                semantic_diff={} if skipped else {"changed": ["@atomic"]},
            )
            receipts.append(receipt)
            heads[node] = receipt["content_hash"]
            upstream = published[node]
    (root / facts["ledger_file"]).write_bytes(
        canonical_json(receipts) + facts["ledger_trailer"].encode()
    )
    return receipts


def tamper_receipt(path: Path, index: int) -> dict[str, Any]:
    """Change one digit of a fingerprint inside receipt `index`; return that receipt."""
    receipts = json.loads(path.read_bytes())
    target: dict[str, Any] = receipts[index]
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
    return target


def tamper_version(root: Path) -> Path:
    """Flip one bit near the end of the fourth version file; return that file."""
    victim = sorted(root.rglob("versions/*.bin"))[3]
    data = bytearray(victim.read_bytes())
    data[-2] ^= 0x01
    victim.write_bytes(bytes(data))
    return victim
