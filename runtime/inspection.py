"""Read-only views for `prosec status`, `prosec inspect` and `prosec receipts list`.

Each function returns plain JSON-ready data; the CLI prints it as text or `--json`.
`inspect_run` also reads the old `.prose/runs/{id}/` layout (state.md + bindings/).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .backends import Backend
from .config import load_config
from .intent import Intent
from .protocol import ReceiptStatus
from .runs import RUN_ID, RunDir, resolve_run, runs_in_order

__all__ = ["inspect_ref", "inspect_run", "list_receipts", "status"]

_EVENT = re.compile(r"^(?P<n>\d+)(?P<sub>[a-z]?)→ (?P<rest>.*)$")


def _short(value: str | None) -> str | None:
    return None if value is None else value.removeprefix("sha256:")[:12]


def _why(receipt: Mapping[str, Any]) -> str:
    status = receipt["status"]
    diff = receipt.get("semantic_diff", {})
    wake = receipt.get("wake", {})
    cause = f"woken by {wake.get('source')}"
    if wake.get("refs"):
        cause += f" ({len(wake['refs'])} ref{'s' if len(wake['refs']) != 1 else ''})"
    if status == ReceiptStatus.RENDERED:
        return f"{cause}; facets moved: {', '.join(diff.get('changed', [])) or '@atomic'}"
    if status == ReceiptStatus.SKIPPED:
        if receipt.get("cost", {}).get("provider") == "none":
            return f"{cause}; memo hit: contract and inputs unchanged, not rendered"
        return f"{cause}; rendered, but no material fingerprint moved"
    return f"{cause}; {diff.get('error', 'error')}: {diff.get('reason', '')}".rstrip(": ")


def status(root: Path, intent: Intent, backend: Backend) -> dict[str, Any]:
    """The runtime's belief about ROOT: active intent, per-node heads, recent runs."""
    heads = backend.heads(intent.order)
    nodes = []
    for name in intent.order:
        head = heads[name]
        last = head.last
        entry: dict[str, Any] = {
            "node": name,
            "status": last["status"] if last else "never-run",
            "version": backend.published_version(name),
            "receipts": len(backend.ledger(name)) if last else 0,
            "wake_source": intent.nodes[name].wake_source,
        }
        if last and last["status"] == ReceiptStatus.FAILED:
            entry["error"] = last["semantic_diff"].get("error")
            entry["reason"] = last["semantic_diff"].get("reason")
        nodes.append(entry)
    runs_dir = root / "runs"
    runs = [
        {"run_id": run.path.name, "state": run.finished() or "interrupted"}
        for run in runs_in_order(runs_dir)[-5:]
    ]
    return {
        "root": str(root),
        "backend": backend.describe(),
        "intent": {
            "nodes": len(intent.nodes),
            "edges": len(intent.edges),
            "entry_points": list(intent.entry_points),
        },
        "nodes": nodes,
        "pending_commits": sorted(backend.pendings()),
        "runs": runs,
    }


def inspect_run(path: Path) -> dict[str, Any]:
    """What a run did: each event in order, its wave, and why each node did what it did."""
    if (path / "state.md").is_file() and (path / "bindings").is_dir():
        return _legacy(path)
    run = RunDir(path)
    receipts: dict[str, list[dict[str, Any]]] = {}
    for ledger in sorted((path / "receipts").glob("*.jsonl")):
        receipts[ledger.stem] = run.receipts(ledger.stem)
    cursor = {node: 0 for node in receipts}
    events = []
    waves: list[dict[str, Any]] = []
    header = []
    for line in run.log_lines():
        match = _EVENT.match(line)
        if match is None:
            if line and not line.startswith("---"):
                header.append(line)
            continue
        rest = match.group("rest")
        if rest.startswith("∥") or rest.startswith("[input]"):
            continue
        node, _, outcome = rest.partition(" ")
        entry: dict[str, Any] = {
            "event": match.group("n") + match.group("sub"),
            "node": node,
            "marker": outcome,
        }
        chain = receipts.get(node, [])
        if cursor.get(node, 0) < len(chain):
            receipt = chain[cursor[node]]
            cursor[node] += 1
            entry.update(
                status=receipt["status"], why=_why(receipt), receipt=_short(receipt["content_hash"])
            )
        events.append(entry)
        number = int(match.group("n"))
        if not waves or waves[-1]["event"] != number:
            waves.append({"event": number, "nodes": []})
        waves[-1]["nodes"].append(node)
    counts: dict[str, int] = {}
    for entry in events:
        key = entry.get("status", "unknown")
        counts[key] = counts.get(key, 0) + 1
    return {
        "run_id": run.run_id,
        "state": run.finished() or "interrupted",
        "header": header,
        "counts": counts,
        "waves": waves,
        "events": events,
    }


def inspect_ref(root: Path, ref: str) -> dict[str, Any]:
    """`inspect_run` of the run `ref` names under ROOT (an id, `latest~N`, a path), or of
    an old `.prose/runs/{id}` folder named by its path. ROOT's prose.toml is checked
    first, as every command checks it. References are untrusted: nothing else is read
    (a folder that merely holds a `state.md` is refused)."""
    load_config(root)
    legacy = _legacy_run(Path(ref))
    if legacy is not None:
        return inspect_run(legacy)
    return inspect_run(resolve_run(root, ref))


def _legacy_run(path: Path) -> Path | None:
    """`path` when it is an old run folder `.prose/runs/{run id}/` (symlinks resolved)
    with its `state.md`; None for anything else."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):
        return None
    parent = resolved.parent
    is_run = (
        RUN_ID.match(resolved.name) is not None
        and parent.name == "runs"
        and parent.parent.name == ".prose"
    )
    return resolved if is_run and (resolved / "state.md").is_file() else None


def _legacy(path: Path) -> dict[str, Any]:
    state = (path / "state.md").read_text(encoding="utf-8", errors="replace")
    fields = dict(re.findall(r"^(run|program|started|updated): (.+)$", state, re.MULTILINE))
    bindings = []
    for binding in sorted((path / "bindings").glob("*.md")):
        text = binding.read_text(encoding="utf-8", errors="replace")
        kind = re.search(r"^kind: (\w+)", text, re.MULTILINE)
        bindings.append({"name": binding.stem, "kind": kind.group(1) if kind else None})
    agents = (
        sorted(p.name for p in (path / "agents").iterdir()) if (path / "agents").is_dir() else []
    )
    return {
        "run_id": path.name,
        "legacy": True,
        "state": "legacy .prose/ run",
        **fields,
        "bindings": bindings,
        "agents": agents,
    }


def list_receipts(intent: Intent, backend: Backend, node: str | None) -> list[dict[str, Any]]:
    """Durable receipts, per node in topological order, oldest first."""
    names = [node] if node else list(intent.order)
    out = []
    for name in names:
        for index, receipt in enumerate(backend.ledger(name), start=1):
            out.append(
                {
                    "node": name,
                    "index": index,
                    "status": receipt["status"],
                    "wake": receipt["wake"]["source"],
                    "hash": receipt["content_hash"],
                    "prev": receipt["prev"],
                    "why": _why(receipt),
                }
            )
    return out
