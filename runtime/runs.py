"""The run directory `runs/{YYYYMMDD}-{HHMMSS}-{random6}/`: layout, vm.log.md, run ledgers.

Layout (seed 001): compiled-intent.json, root.prose.md, sources/, workspace/{node}/,
world-model/{node}/ + .version, world-model/caller/, receipts/{node}.jsonl, vm.log.md,
agents/, plus run.json (what woke the run, for `prosec resume`). A render's staging
folder is `workspace/{node}/__publish/`; other `__`-prefixed workspace files are the
VM's (`__inputs.json`, `__wake.json`, `__render.log`) or the render's signals
(`__error.md`, `__attest.json`).
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .canonical import canonical_json
from .fsio import (
    PathEscapeError,
    append_line,
    atomic_write_bytes,
    atomic_write_text,
    confined,
    replace_dir,
    safe_name,
)
from .protocol import Receipt
from .receipts import append_receipt, parse_ledger
from .userjson import loads

__all__ = ["RUN_ID", "RunDir", "new_run_id", "resolve_run", "runs_in_order"]

RUN_ID = re.compile(r"^\d{8}-\d{6}-[0-9a-z]{6}$")
_LATEST = re.compile(r"^latest(?:~(\d{1,6}))?$")
VERSION_FILE = ".version"
STAGING = "__publish"


def new_run_id(now: dt.datetime | None = None) -> str:
    """A fresh run id `{YYYYMMDD}-{HHMMSS}-{random6}` (UTC)."""
    stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%d-%H%M%S")
    alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
    return f"{stamp}-{''.join(secrets.choice(alphabet) for _ in range(6))}"


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def resolve_run(root: Path, ref: str) -> Path:
    """Resolve a run reference (bare id, `latest` / `latest~N`, `~/{id}`, or a path inside
    a runs/ folder).

    References are untrusted: anything that is not a run id under ROOT/runs/ or
    ~/.agents/prose/runs/ (after resolving symlinks) is refused.
    """
    allowed = [(root / "runs").resolve(), (Path.home() / ".agents/prose/runs").resolve()]
    latest = _LATEST.match(ref)
    if latest:
        back = int(latest.group(1) or 0)
        runs = runs_in_order(root / "runs")
        if back >= len(runs):
            raise FileNotFoundError(f"run {ref!r}: only {len(runs)} run(s) under {root / 'runs'}")
        candidate = runs[-1 - back].path
    elif RUN_ID.match(ref):
        candidate = root / "runs" / ref
    elif ref.startswith("~/") and RUN_ID.match(ref[2:]):
        candidate = Path.home() / ".agents/prose/runs" / ref[2:]
    elif ref.startswith("/") or ref.startswith("runs/"):
        candidate = Path(ref) if ref.startswith("/") else root / ref
    else:
        raise PathEscapeError(
            f"run reference {ref!r} is not a run id (YYYYMMDD-HHMMSS-xxxxxx), latest, "
            "latest~N, ~/id or a path"
        )
    resolved = candidate.resolve()
    if resolved.parent not in allowed or not RUN_ID.match(resolved.name):
        raise PathEscapeError(f"run reference {ref!r} does not name a run under a runs/ folder")
    if not (resolved / "compiled-intent.json").is_file():
        raise FileNotFoundError(f"run {ref!r}: no run directory at {resolved}")
    return resolved


@dataclass(frozen=True, slots=True)
class RunDir:
    """One run directory; every method is a small, crash-safe file operation."""

    path: Path

    @property
    def run_id(self) -> str:
        return self.path.name

    # -- layout -------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        root: Path,
        run_id: str,
        *,
        intent_bytes: bytes,
        sources: list[str],
        root_source: str | None,
        title: str,
        upstream: list[str],
        info: Mapping[str, Any],
        runs_dir: Path | None = None,
    ) -> RunDir:
        path = (runs_dir or root / "runs") / run_id
        path.mkdir(parents=True, exist_ok=False)
        run = cls(path)
        for sub in ("sources", "workspace", "world-model/caller", "receipts", "agents"):
            (path / sub).mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path / "compiled-intent.json", intent_bytes)
        for source in sources:
            try:
                src = confined(root, source, "source path")
                dest = confined(path / "sources", source, "source path")
            except PathEscapeError:
                continue
            if src.is_file():
                dest.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_bytes(dest, src.read_bytes())
        if root_source is not None:
            try:
                src = confined(root, root_source, "root source")
                if src.is_file():
                    atomic_write_bytes(path / "root.prose.md", src.read_bytes())
            except PathEscapeError:
                pass
        atomic_write_bytes(path / "run.json", canonical_json(dict(info)) + b"\n")
        header = [f"# run:{run_id} {title}"]
        if upstream:
            header.append(f"upstream: [{', '.join(upstream)}]")
        header.append(f"root: {root_source or '(none)'}")
        atomic_write_text(path / "vm.log.md", "\n".join(header) + "\n\n")
        return run

    def add_wakes(self, wakes: list[dict[str, Any]]) -> None:
        """Record wakes taken from the inbox mid-run (so `prosec resume` knows them)."""
        info = self.info()
        info["wakes"] = [*info.get("wakes", []), *wakes]
        atomic_write_bytes(self.path / "run.json", canonical_json(info) + b"\n")

    def info(self) -> dict[str, Any]:
        data = loads((self.path / "run.json").read_bytes(), source=str(self.path / "run.json"))
        return data if isinstance(data, dict) else {}

    def started_ns(self) -> int:
        """When the run was created (0 when unknown), for ordering runs of one second."""
        try:
            value = self.info().get("started_ns", 0)
        except (OSError, ValueError):
            return 0
        return value if isinstance(value, int) else 0

    def workspace(self, node: str) -> Path:
        return self.path / "workspace" / safe_name(node, "node name")

    def staging(self, node: str) -> Path:
        return self.workspace(node) / STAGING

    def world_model(self, node: str) -> Path:
        return self.path / "world-model" / safe_name(node, "node name")

    def ledger(self, node: str) -> Path:
        return self.path / "receipts" / f"{safe_name(node, 'node name')}.jsonl"

    def source(self, rel: str) -> Path | None:
        try:
            path = confined(self.path / "sources", rel, "source path")
        except PathEscapeError:
            return None
        return path if path.is_file() else None

    def prepare_workspace(self, node: str) -> Path:
        """Fresh signals and staging for a render; earlier scratch stays for debugging."""
        workspace = self.workspace(node)
        workspace.mkdir(parents=True, exist_ok=True)
        for name in ("__error.md", "__attest.json"):
            (workspace / name).unlink(missing_ok=True)
        staging = workspace / STAGING
        if staging.exists():
            shutil.rmtree(staging)
        staging.mkdir()
        return workspace

    # -- world model ----------------------------------------------------------------------

    def version_of(self, node: str) -> str | None:
        marker = self.world_model(node) / VERSION_FILE
        return marker.read_text(encoding="utf-8").strip() if marker.exists() else None

    def materialize(self, node: str, address: str, files: Mapping[str, bytes]) -> Path:
        """Publish `files` at world-model/{node}/ with its `.version` (idempotent)."""
        target = self.world_model(node)
        if self.version_of(node) != address:
            # derived from the durable version blob: atomic, but not fsynced
            replace_dir(target, {**files, VERSION_FILE: address.encode() + b"\n"}, durable=False)
        return target

    # -- ledgers and log ------------------------------------------------------------------

    def append_receipt(self, node: str, receipt: Receipt) -> None:
        """Append to receipts/{node}.jsonl unless it already ends with this receipt."""
        path = self.ledger(node)
        if path.exists():
            receipts, _ = parse_ledger(path, path.read_bytes())
            if receipts and receipts[-1].get("content_hash") == receipt["content_hash"]:
                return
        append_receipt(path, receipt)

    def receipts(self, node: str) -> list[dict[str, Any]]:
        """The run ledger's receipts as parsed (unverified: read-only views use them)."""
        path = self.ledger(node)
        return parse_ledger(path, path.read_bytes())[0] if path.exists() else []

    def log(self, line: str) -> None:
        append_line(self.path / "vm.log.md", line.encode("utf-8"))

    def log_lines(self) -> list[str]:
        path = self.path / "vm.log.md"
        # a damaged byte shows as U+FFFD rather than stopping every reader of the log
        text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        return text.splitlines()

    def last_event(self) -> int:
        """The highest event number N in `N→` markers so far (0 when none)."""
        best = 0
        for line in self.log_lines():
            match = re.match(r"^(\d+)[a-z]*→", line)
            if match:
                best = max(best, int(match.group(1)))
        return best

    def finished(self) -> str | None:
        """'complete' or 'failed' when the log has its end marker, else None."""
        for line in reversed(self.log_lines()):
            if line.startswith("---end"):
                return "complete"
            if line.startswith("---error"):
                return "failed"
        return None


def runs_in_order(runs_dir: Path) -> list[RunDir]:
    """The run folders under `runs_dir`, oldest first (creation time, then id)."""
    if not runs_dir.is_dir():
        return []
    found = [RunDir(p) for p in runs_dir.iterdir() if RUN_ID.match(p.name)]
    return sorted(found, key=lambda run: (run.started_ns(), run.path.name))
