"""Read-only views for `prosec status`, `prosec inspect` and `prosec receipts list`.

Each function returns plain JSON-ready data; the CLI prints it as text or `--json`.
`inspect_run` also reads the old `.prose/runs/{id}/` layout (state.md + bindings/).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .backends import Backend
from .config import load_config
from .intent import MANIFEST_LIMIT, Intent
from .protocol import ReceiptStatus
from .runs import RUN_ID, RunDir, resolve_run, runs_in_order
from .userjson import JSONInputError, read_file

__all__ = ["inspect_ref", "inspect_run", "legacy_ref", "list_receipts", "memo_hit", "status"]

_EVENT = re.compile(r"^(?P<n>\d+)(?P<sub>[a-z]?)→ (?P<rest>.*)$")


def _short(value: str | None) -> str | None:
    return None if value is None else value.removeprefix("sha256:")[:12]


_CAUSES = {"external": "a trigger", "self": "its cadence", "input": "a moved input"}


def _cause(receipt: Mapping[str, Any], producers: Mapping[str, str]) -> str:
    """What woke the node, in words: the producers whose receipts the wake names."""
    wake = receipt.get("wake", {})
    source = str(wake.get("source"))
    refs = [str(ref) for ref in wake.get("refs") or []]
    named = sorted({producers[ref] for ref in refs if ref in producers})
    if source == "input" and named:
        return "woken by " + ", ".join(named)
    if source == "input" and refs:
        return f"woken by {plural(len(refs), 'moved input')}"
    if source == "input":
        return "woken as a subscriber (cold start or changed contract)"
    if source == "external" and not refs:
        return "woken by the run, not by a trigger (cold start or changed contract)"
    return f"woken by {_CAUSES.get(source, source)}"


def memo_hit(receipt: Mapping[str, Any]) -> bool:
    """A `skipped` receipt written without rendering: contract and inputs unchanged."""
    return (
        receipt.get("status") == ReceiptStatus.SKIPPED
        and receipt.get("cost", {}).get("provider") == "none"
    )


def _why(receipt: Mapping[str, Any], producers: Mapping[str, str] | None = None) -> str:
    status = receipt["status"]
    diff = receipt.get("semantic_diff", {})
    cause = _cause(receipt, producers or {})
    if status == ReceiptStatus.RENDERED:
        return f"{cause}; moved {', '.join(diff.get('changed', [])) or '@atomic'}"
    if status == ReceiptStatus.SKIPPED:
        if memo_hit(receipt):
            return f"{cause}, but its contract and inputs are unchanged, so it did not render"
        return (
            f"{cause}; it rendered, but nothing material changed, so nothing was published "
            "and its subscribers stay asleep"
        )
    return f"{cause}; {diff.get('error', 'error')}: {diff.get('reason', '')}".rstrip(": ")


def plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _producers(receipts: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, str]:
    """Each receipt's content hash → its node, to name who woke a subscriber."""
    return {str(r["content_hash"]): node for node, chain in receipts.items() for r in chain}


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
            "last_wake": _last_wake(intent, backend, name, last),
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


def _last_wake(
    intent: Intent, backend: Backend, node: str, last: Mapping[str, Any] | None
) -> str | None:
    """What woke the node last, in words: `trigger`, `cadence`, or the producers whose
    receipts its wake names (None before its first receipt)."""
    if last is None:
        return None
    wake = last.get("wake", {})
    source = str(wake.get("source"))
    refs = {str(ref) for ref in wake.get("refs") or []}
    if source != "input":
        return {"external": "trigger", "self": "cadence"}.get(source, source)
    producers = sorted({edge.producer for edge in intent.edges if edge.subscriber == node})
    named = [p for p in producers if any(r["content_hash"] in refs for r in backend.ledger(p))]
    return "input from " + ", ".join(named) if named else "input"


def inspect_run(path: Path) -> dict[str, Any]:
    """What a run did: each event in order, its wave, and why each node did what it did."""
    if (path / "state.md").is_file() and not (path / "compiled-intent.json").is_file():
        return _legacy(path)
    run = RunDir(path)
    receipts: dict[str, list[dict[str, Any]]] = {}
    for ledger in sorted((path / "receipts").glob("*.jsonl")):
        receipts[ledger.stem] = run.receipts(ledger.stem)
    cursor = {node: 0 for node in receipts}
    producers = _producers(receipts)
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
                status=receipt["status"],
                why=_why(receipt, producers),
                receipt=_short(receipt["content_hash"]),
            )
            if memo_hit(receipt):
                entry["memo_hit"] = True
        events.append(entry)
        if entry.get("memo_hit"):
            continue  # not rendered: no wave (as `prosec run` counts them)
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
        "asleep": [n for n in _run_nodes(path) if n not in {e["node"] for e in events}],
    }


def _run_nodes(path: Path) -> list[str]:
    """The nodes of the run's compiled intent, in its order ([] when it cannot be read)."""
    try:
        intent = read_file(path / "compiled-intent.json", MANIFEST_LIMIT, what="compiled intent")
        nodes = intent["topology"]["nodes"]
        return [str(n["node"]) for n in nodes if isinstance(n, dict) and "node" in n]
    except (JSONInputError, KeyError, TypeError):
        return []


def inspect_ref(root: Path, ref: str) -> dict[str, Any]:
    """`inspect_run` of the run `ref` names under ROOT (an id, `latest~N`, a path), or of
    an old `.prose/runs/{id}` folder named by its path. ROOT's prose.toml is checked
    first, as every command checks it. References are untrusted: nothing else is read
    (a folder that merely holds a `state.md` is refused)."""
    load_config(root)
    legacy = _legacy_run(Path(ref)) or _legacy_ref(root, ref)
    if legacy is not None:
        return inspect_run(legacy)
    return inspect_run(resolve_run(root, ref))


def legacy_ref(root: Path, ref: str) -> Path | None:
    """The legacy `.prose/runs/{id}/` folder `ref` names (a path to one, a bare id
    ROOT/runs/ lacks, or `latest` when the newest run is a legacy one), else None."""
    return _legacy_run(Path(ref)) or _legacy_ref(root, ref)


def _legacy_ref(root: Path, ref: str) -> Path | None:
    """The legacy run ROOT/.prose/runs/{id} a bare id names (when ROOT/runs/ has no such
    run), or `latest` when the newest run of the project is a legacy one."""
    from .legacy import legacy_runs

    found = legacy_runs(root)
    if not found:
        return None
    if ref == "latest":
        current = runs_in_order(root / "runs")
        newest = found[-1]
        return newest if not current or current[-1].path.name < newest.name else None
    if RUN_ID.match(ref) and not (root / "runs" / ref).exists():
        return next((p for p in found if p.name == ref), None)
    return None


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


def _legacy(path: Path, root: Path | None = None) -> dict[str, Any]:
    """A legacy run read completely (runtime/legacy.py): the project's `.prose/` agents
    when the run sits in one, the user's `~/.prose/agents/` always."""
    from .legacy import env_names, read_legacy_run

    project = path.parent.parent if path.parent.name == "runs" else None
    if project is not None and project.name != ".prose":
        project = None
    data = read_legacy_run(path, project=project, home=Path.home() / ".prose")
    return {
        "run_id": path.name,
        "legacy": True,
        "state": f"legacy .prose/ run, {data['status']}",
        "path": str(path),
        "env": env_names(project) if project is not None else [],  # names only
        **data,
    }


def list_receipts(intent: Intent, backend: Backend, node: str | None) -> list[dict[str, Any]]:
    """Durable receipts, per node in topological order, oldest first."""
    names = [node] if node else list(intent.order)
    producers = _producers({name: backend.ledger(name) for name in intent.order})
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
                    "why": _why(receipt, producers),
                }
            )
    return out
