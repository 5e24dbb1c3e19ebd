"""The run directory `runs/{YYYYMMDD}-{HHMMSS}-{random6}/`: layout, vm.log.md, run ledgers.

Layout (seed 001): compiled-intent.json, root.prose.md, sources/, workspace/{node}/,
world-model/{node}/ + .version, world-model/caller/, receipts/{node}.jsonl, vm.log.md,
agents/, plus run.json (what woke the run, for `prosec resume`). Each render attempt
publishes into its own staging folder `staging/{node}/{attempt}/` (a fresh, random
name: a stale writer from an earlier attempt cannot reach a live one) and is recorded
in `procs/` while its process group lives (renders/process.py). `__`-prefixed
workspace files are the VM's (`__inputs.json`, `__wake.json`, `__render.log`) or the
render's signals (`__error.md`, `__attest.json`). Materialized inputs are read-only
and verified against their `.version` before a render reads them.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .canonical import PathError, canonical_json, content_address, decode_frame
from .fsio import (
    Confiner,
    PathEscapeError,
    append_line,
    atomic_write_bytes,
    confined,
    fsync_dir,
    read_tree,
    replace_dir,
    safe_name,
)
from .protocol import Receipt
from .receipts import append_receipt, parse_ledger
from .userjson import loads

__all__ = ["RUN_ID", "RunDir", "new_run_id", "remove_unbuilt", "resolve_run", "runs_in_order"]

RUN_ID = re.compile(r"^\d{8}-\d{6}-[0-9a-z]{6}$")
_LATEST = re.compile(r"^latest(?:~(\d{1,6}))?$")
VERSION_FILE = ".version"
STAGING = "staging"
SIGNALS = ("__error.md", "__attest.json")
BUILDING = ".new-"  # runs/.new-{pid}-{run id}: a run being created


def remove_unbuilt(runs_dir: Path) -> list[str]:
    """Remove the half-made runs crashed creators left (`.new-{pid}-{id}` folders whose
    process is gone); returns their names."""
    removed: list[str] = []
    if not runs_dir.is_dir():
        return removed
    for entry in runs_dir.iterdir():
        pid, _, rest = entry.name.removeprefix(BUILDING).partition("-")
        if not entry.name.startswith(BUILDING) or not pid.isdigit() or not rest:
            continue
        if int(pid) != os.getpid() and _alive(int(pid)):
            continue  # another runner (another backend on this root) is creating it
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry.name)
    return sorted(removed)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
            raise FileNotFoundError(
                f"run {ref!r}: only {len(runs)} run{'' if len(runs) == 1 else 's'} under {root / 'runs'}"
            )
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
        compiled: Mapping[str, bytes] | None = None,
        lazy: bool = False,
        durable: bool = True,
    ) -> RunDir:
        """Create the run folder whole. `compiled` holds the sources as compiled (path →
        bytes, runtime/provenance.py); a source it lacks is copied from the project.
        `lazy` leaves `sources/` out: `add_sources` snapshots them before the run's first
        render, so a run that renders nothing copies nothing. `durable=False` syncs
        nothing: a scratch folder no recovery reads (a worker's)."""
        final = (runs_dir or root / "runs") / run_id
        if final.exists():
            raise FileExistsError(f"run {run_id} exists")
        # built under a hidden name and renamed whole: a crash mid-creation leaves no
        # half-made run (the next runner removes the hidden folder, `remove_unbuilt`).
        # Nothing inside needs its own atomic rename, so each file is written once and
        # fsynced once before the rename; a file the latest run already holds byte for
        # byte (a source or the intent that did not change) is hard-linked from it.
        path = final.with_name(f"{BUILDING}{os.getpid()}-{run_id}")
        path.mkdir(parents=True, exist_ok=False)
        for sub in ("workspace", "world-model/caller", "receipts", "agents"):
            (path / sub).mkdir(parents=True, exist_ok=True)
        snapshot = _Snapshot(_latest_run(final.parent))
        snapshot.put(path / "compiled-intent.json", intent_bytes, "compiled-intent.json")
        if not lazy:
            (path / "sources").mkdir()
            linked = _Snapshot(_latest_sources(final.parent))
            _put_sources(linked, root, path, sources, compiled)
            snapshot.written += linked.written
        if root_source is not None:
            try:
                src = confined(root, root_source, "root source")
                if compiled is not None and root_source in compiled:
                    snapshot.put(path / "root.prose.md", compiled[root_source], "root.prose.md")
                elif src.is_file():
                    snapshot.put(path / "root.prose.md", src.read_bytes(), "root.prose.md")
            except PathEscapeError:
                pass
        snapshot.put(path / "run.json", canonical_json(dict(info)) + b"\n", None)
        header = [f"# run:{run_id} {title}"]
        if upstream:
            header.append(f"upstream: [{', '.join(upstream)}]")
        header.append(f"root: {root_source or '(none)'}")
        snapshot.put(path / "vm.log.md", ("\n".join(header) + "\n\n").encode(), None)
        if durable:
            snapshot.sync(path)
        os.rename(path, final)
        if durable:
            fsync_dir(final.parent)
        return cls(final)

    def has_sources(self) -> bool:
        return (self.path / "sources").is_dir()

    def add_sources(
        self, root: Path, sources: list[str], compiled: Mapping[str, bytes] | None
    ) -> None:
        """Snapshot the sources into a run created `lazy` (once): built beside `sources/`
        under a hidden name, synced, and renamed into place whole (what a crash leaves
        of it is a leftover `prosec resume` removes)."""
        if self.has_sources():
            return
        building = self.path / f".sources.new-{secrets.token_hex(4)}"
        building.mkdir()
        snapshot = _Snapshot(_latest_sources(self.path.parent))
        _put_sources(snapshot, root, building, sources, compiled, folder="")
        snapshot.sync(building)
        os.rename(building, self.path / "sources")
        fsync_dir(self.path)

    def add_wakes(self, wakes: list[dict[str, Any]], taken: list[str]) -> None:
        """Record wakes taken from the inbox mid-run, with their inbox ids (so `prosec
        resume` knows them, and a crash before they leave the inbox serves them once)."""
        info = self.info()
        info["wakes"] = [*info.get("wakes", []), *wakes]
        info["taken"] = [*info.get("taken", []), *taken]
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

    def staging(self, node: str, attempt: str) -> Path:
        """The staging folder of one render attempt of `node`."""
        return self.path / STAGING / safe_name(node, "node name") / safe_name(attempt, "attempt")

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

    def prepare_workspace(self, node: str, attempt: str) -> Path:
        """Fresh signals and a fresh staging folder for a render attempt (earlier attempts'
        staging removed; other scratch stays for debugging)."""
        workspace = self.workspace(node)
        if workspace.is_symlink():  # a render replaced its workspace: never follow it
            workspace.unlink()
        workspace.mkdir(parents=True, exist_ok=True)
        for name in SIGNALS:
            _remove(workspace / name)
        for entry in workspace.glob("__*"):  # the VM's files: a render may have left traps
            if entry.is_symlink() or not entry.is_file():
                _remove(entry)
        attempts = self.path / STAGING / safe_name(node, "node name")
        if attempts.is_symlink():
            attempts.unlink()
        if attempts.is_dir():
            for old in attempts.iterdir():
                _remove(old)
        self.staging(node, attempt).mkdir(parents=True)
        return workspace

    def drop_staging(self, node: str, attempt: str) -> None:
        """Remove an attempt's staging folder once judged (what it held is published or
        refused; whatever a hostile render left there must not linger in the run)."""
        _remove(self.staging(node, attempt))

    # -- world model ----------------------------------------------------------------------

    def version_of(self, node: str) -> str | None:
        """The `.version` of world-model/{node}/ (None when absent or not a plain file)."""
        marker = self.world_model(node) / VERSION_FILE
        if marker.is_symlink() or not marker.is_file():
            return None
        try:
            return marker.read_bytes()[:200].decode("ascii").strip()
        except (OSError, UnicodeDecodeError):
            return None

    def materialize(self, node: str, address: str, files: Mapping[str, bytes]) -> Path:
        """Publish `files` at world-model/{node}/ with its `.version` (idempotent), its
        files read-only: renders read them, none may write them."""
        target = self.world_model(node)
        if not self.intact(node, address):
            # derived from the durable version blob: atomic, but not fsynced
            replace_dir(target, {**files, VERSION_FILE: address.encode() + b"\n"}, durable=False)
            for dirpath, _, filenames in os.walk(target):
                for name in filenames:
                    os.chmod(
                        os.path.join(dirpath, name), stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
                    )
        return target

    def pin(self, node: str, address: str, blob: Callable[[], bytes]) -> bool:
        """Make world-model/{node}/ exactly the artifact `address`, rebuilt from its
        version blob when anything changed it; True when it had to be rebuilt."""
        if self.intact(node, address):
            return False
        self.materialize(node, address, decode_frame(blob()))
        return True

    def intact(self, node: str, address: str) -> bool:
        """Whether world-model/{node}/ still holds exactly the artifact `address` (what a
        render reads must be what its receipt pins)."""
        target = self.world_model(node)
        if target.is_symlink() or self.version_of(node) != address:
            return False
        try:
            files = read_tree(target)
        except (OSError, PathError):
            return False
        files.pop(VERSION_FILE, None)
        try:
            return content_address(files) == address
        except PathError:
            return False

    # -- ledgers and log ------------------------------------------------------------------

    def append_receipt(self, node: str, receipt: Receipt, *, durable: bool = True) -> None:
        """Append to receipts/{node}.jsonl unless it already ends with this receipt
        (`durable=False`: a group commit syncs it with the rest of the group)."""
        path = self.ledger(node)
        if path.exists():
            receipts, _ = parse_ledger(path, path.read_bytes())
            if receipts and receipts[-1].get("content_hash") == receipt["content_hash"]:
                return
        append_receipt(path, receipt, durable=durable)

    def receipts(self, node: str) -> list[dict[str, Any]]:
        """The run ledger's receipts as parsed (unverified: read-only views use them)."""
        path = self.ledger(node)
        return parse_ledger(path, path.read_bytes())[0] if path.exists() else []

    def log(self, line: str, *, durable: bool = True) -> None:
        append_line(self.path / "vm.log.md", line.encode("utf-8"), durable=durable)

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


def _remove(path: Path) -> None:
    """Remove a file, a link (never its target) or a folder tree, if present."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _put_sources(
    snapshot: _Snapshot,
    root: Path,
    top: Path,
    sources: list[str],
    compiled: Mapping[str, bytes] | None,
    folder: str = "sources",
) -> None:
    """Put each source (as compiled, else as the project holds it) under `top/folder`."""
    base = top / folder if folder else top
    in_project, in_run = Confiner(root, "source path"), Confiner(base, "source path")
    for source in sources:
        try:
            src = in_project(source)
            dest = in_run(source)
        except PathEscapeError:
            continue
        if compiled is not None and source in compiled:
            dest.parent.mkdir(parents=True, exist_ok=True)
            snapshot.put(dest, compiled[source], f"sources/{source}")
        elif src.is_file():
            dest.parent.mkdir(parents=True, exist_ok=True)
            snapshot.put(dest, src.read_bytes(), f"sources/{source}")


def _latest_sources(runs_dir: Path) -> Path | None:
    """The newest run folder holding a sources snapshot (runs that rendered nothing
    have none), if any."""
    if not runs_dir.is_dir():
        return None
    names = sorted((e.name for e in os.scandir(runs_dir) if RUN_ID.match(e.name)), reverse=True)
    return next((runs_dir / n for n in names if (runs_dir / n / "sources").is_dir()), None)


def _latest_run(runs_dir: Path) -> Path | None:
    """The run folder with the greatest id (complete: runs appear only whole), if any."""
    if not runs_dir.is_dir():
        return None
    names = [entry.name for entry in os.scandir(runs_dir) if RUN_ID.match(entry.name)]
    return runs_dir / max(names) if names else None


class _Snapshot:
    """The files of a run being created: written unsynced, or linked from an earlier run,
    then made durable together (`sync`) before the run folder is renamed into place."""

    def __init__(self, earlier: Path | None) -> None:
        self.earlier = earlier
        self.written: list[Path] = []

    def put(self, dest: Path, data: bytes, relative: str | None) -> None:
        """`dest` holds `data`: a hard link to the earlier run's `relative` when that
        holds these very bytes (durable since that run was created), else a new file."""
        if self.earlier is not None and relative is not None:
            previous = self.earlier / relative
            try:
                info = previous.lstat()
                if (
                    stat.S_ISREG(info.st_mode)
                    and info.st_size == len(data)
                    and previous.read_bytes() == data
                ):
                    os.link(previous, dest)
                    return
            except OSError:
                pass  # gone, unreadable, or a filesystem without hard links: write it
        with open(dest, "wb") as handle:
            handle.write(data)
        self.written.append(dest)

    def sync(self, top: Path) -> None:
        """fsync every written file, then every folder of the tree (its entries)."""
        for path in self.written:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        for directory, _, _ in os.walk(top):
            fsync_dir(Path(directory))


def runs_in_order(runs_dir: Path) -> list[RunDir]:
    """The run folders under `runs_dir`, oldest first (creation time, then id)."""
    if not runs_dir.is_dir():
        return []
    found = [RunDir(p) for p in runs_dir.iterdir() if RUN_ID.match(p.name)]
    return sorted(found, key=lambda run: (run.started_ns(), run.path.name))
