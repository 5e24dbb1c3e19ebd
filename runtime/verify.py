"""`prosec receipts verify`: find every ledger, version and durable store under a path and
check them all.

Understands an OpenProse root (its configured backend, `[run] backend` or `--backend`,
is checked whatever it is: the `state/` folder, `state/prosec.db`, or the PostgreSQL
schema), durable state folders (`state/world-model/*/`), SQLite state files
(`prosec.db`), prosec run directories (`receipts/*.jsonl`, `world-model/*/.version`),
single `.jsonl` ledgers, upstream `receipts.json` arrays and upstream
`world-models/*/versions/*.bin` frames. Symlinked folders are followed (each real
folder once). Nothing is ever written, and nothing a file holds makes it fail: every
problem is a Finding with its place.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .backends import BackendError
from .backends.audit import StoreAudit
from .backends.filesystem import FilesystemAudit
from .backends.sqlite import SqliteAudit
from .canonical import content_address
from .config import load_config
from .fsio import PathEscapeError, read_tree
from .receipts import (
    Finding,
    parse_jsonl,
    verify_chain,
    verify_node_chain,
    verify_receipts_array,
    verify_version_file,
)
from .userjson import JSONInputError, read_limited
from .verify_store import SpecIndex, StoreReport, audit_store

__all__ = ["VerifyReport", "verify_path"]

_SKIPPED_DIRS = frozenset({".git", ".venv", "node_modules", "__pycache__"})
_NO_LIMIT = 1 << 62


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


@dataclass(slots=True)
class _Tally:
    ledgers: int = 0
    receipts: int = 0
    versions: int = 0
    findings: list[Finding] = field(default_factory=list)
    durable: dict[str, set[str]] = field(default_factory=dict)
    run_ledgers: list[tuple[Path, list[str], list[dict[str, Any]]]] = field(default_factory=list)
    specs: dict[Path | None, SpecIndex] = field(default_factory=dict)

    def add(self, report: StoreReport) -> None:
        self.ledgers += report.ledgers
        self.receipts += report.receipts
        self.versions += report.versions
        self.findings += report.findings
        for node, hashes in report.hashes.items():
            self.durable.setdefault(node, set()).update(hashes)

    def spec_index(self, root: Path | None) -> SpecIndex:
        if root not in self.specs:
            self.specs[root] = SpecIndex(root)
        return self.specs[root]

    def problem(self, path: Path, message: str, position: str = "-") -> None:
        self.findings.append(Finding(file=str(path), position=position, node=None, message=message))


def verify_path(
    target: Path, *, backend: str | None = None, env: Mapping[str, str] | None = None
) -> VerifyReport:
    """Verify everything verifiable under `target` (a directory or a single file).

    When `target` is an OpenProse root (it holds prose.toml, or `backend` is given), its
    durable store is checked too: `backend`, else prose.toml's `[run] backend`. A bad
    prose.toml raises ConfigError; a store that cannot be opened raises BackendError.
    """
    tally = _Tally()
    if not target.exists():
        kind = "a broken symlink" if target.is_symlink() else "no such path"
        tally.problem(target, kind)
    elif target.is_dir():
        _verify_tree(target, tally)
        if backend is not None or os.path.lexists(target / "prose.toml"):
            name = backend or load_config(target).backend
            store = _open_store(name, target, env or {})
            if store is not None:
                _audit(store, tally, target)
        _cross_check(tally)
    else:
        _verify_file(target, tally)
    return VerifyReport(
        ledgers=tally.ledgers,
        receipts=tally.receipts,
        versions=tally.versions,
        findings=tuple(tally.findings),
    )


def _open_store(name: str, root: Path, env: Mapping[str, str]) -> StoreAudit | None:
    """The configured backend's store, when the tree walk does not already cover it."""
    if name == "postgres":
        try:
            from .backends.postgres_audit import PostgresAudit
        except ModuleNotFoundError as exc:  # psycopg comes with the `postgres` extra
            if (exc.name or "").partition(".")[0] != "psycopg":
                raise
            raise BackendError(
                "verifying the PostgreSQL backend needs the 'postgres' extra: "
                "pip install 'prosec[postgres]'"
            ) from None
        return PostgresAudit.from_env(root, env)
    # filesystem and SQLite state lie under ROOT/state/, which the walk checks (a
    # symlinked state/ too); in-context state is never durable
    return None


def _audit(store: StoreAudit, tally: _Tally, root: Path | None) -> None:
    try:
        tally.add(audit_store(store, tally.spec_index(root)))
    except BackendError as exc:
        tally.problem(Path(store.where), str(exc))
    finally:
        store.close()


# -- single files -------------------------------------------------------------------------


def _verify_file(path: Path, tally: _Tally) -> None:
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        tally.problem(path, f"cannot read: {exc.strerror or exc}")
        return
    if not stat.S_ISREG(mode):
        tally.problem(path, "not a regular file or directory")
        return
    if path.suffix == ".bin":
        _loose_version(path, tally)
    elif path.suffix == ".jsonl":
        _loose_ledger(path, tally)
    elif path.suffix == ".db":
        _sqlite(path, tally)
    else:
        _receipts_array(path, tally)


def _read(path: Path, tally: _Tally) -> bytes | None:
    try:
        return read_limited(path, _NO_LIMIT)
    except JSONInputError as exc:
        tally.problem(path, str(exc))
        return None


def _loose_ledger(path: Path, tally: _Tally) -> None:
    """A `.jsonl` ledger: a durable one (`world-model/{node}/receipts.jsonl`) must start
    at null and hold only its node's receipts; a run ledger may continue a chain."""
    data = _read(path, tally)
    if data is None:
        return
    parsed = parse_jsonl(str(path), data)
    tally.ledgers += 1
    tally.receipts += len(parsed.receipts)
    if path.name == "receipts.jsonl" and path.parent.parent.name == "world-model":
        node = path.parent.name
        tally.findings += verify_node_chain(str(path), node, parsed)[1]
        tally.durable.setdefault(node, set()).update(
            str(r.get("content_hash")) for r in parsed.receipts
        )
        return
    chain, _ = verify_chain(
        parsed.receipts, file=str(path), positions=parsed.positions, computed=parsed.hashes
    )
    tally.findings += parsed.findings + chain
    if path.parent.name == "receipts":
        tally.run_ledgers.append((path, parsed.positions, parsed.receipts))


def _loose_version(path: Path, tally: _Tally) -> None:
    tally.versions += 1
    try:
        found = verify_version_file(path)
    except OSError as exc:
        found = [Finding(file=str(path), position="-", node=None, message=f"cannot read: {exc}")]
    node = _node_of_versions(path)
    tally.findings += [dataclasses.replace(f, node=f.node or node) for f in found]


def _receipts_array(path: Path, tally: _Tally) -> None:
    try:
        found, count = verify_receipts_array(path)
    except OSError as exc:
        found, count = [Finding(file=str(path), position="-", node=None, message=str(exc))], 0
    tally.findings += found
    tally.ledgers += 1
    tally.receipts += count


def _sqlite(path: Path, tally: _Tally) -> None:
    try:
        store = SqliteAudit(path)
    except BackendError as exc:
        tally.problem(path, str(exc))
        return
    root = path.parent.parent if path.parent.name == "state" else None
    _audit(store, tally, root)


def _node_of_versions(path: Path) -> str | None:
    owner = path.parent.parent.name
    try:
        decoded = bytes.fromhex(owner).decode("utf-8")
    except ValueError:
        return owner
    return decoded if decoded.isprintable() else owner


# -- directories --------------------------------------------------------------------------


def _walk(top: Path) -> Iterator[tuple[Path, list[str], list[str]]]:
    """os.walk following symlinked folders, each real folder once (no symlink loops)."""
    seen: set[tuple[int, int]] = set()
    for dirpath, dirnames, filenames in os.walk(top, followlinks=True):
        try:
            info = os.stat(dirpath)
        except OSError:
            dirnames[:] = []
            continue
        key = (info.st_dev, info.st_ino)
        if key in seen:
            dirnames[:] = []
            continue
        seen.add(key)
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIPPED_DIRS)
        yield Path(dirpath), dirnames, sorted(filenames)


def _verify_tree(top: Path, tally: _Tally) -> None:
    stores: list[Path] = []
    for directory, dirnames, filenames in _walk(top):
        if "world-model" in dirnames and not (directory / "compiled-intent.json").exists():
            stores.append(directory)  # a durable state folder (not a run): checked as a store
        if _inside_store(directory, stores):
            continue
        for name in filenames:
            path = directory / name
            if name == "prosec.db":
                _sqlite(path, tally)
            elif name == "receipts.json":
                _receipts_array(path, tally)
            elif name.endswith(".jsonl") and (
                directory.name == "receipts" or name == "receipts.jsonl"
            ):
                _loose_ledger(path, tally)
            elif name.endswith(".bin") and directory.name == "versions":
                _loose_version(path, tally)
            elif name == ".version":
                tally.findings += _check_published(path)
    for state in stores:
        _audit(FilesystemAudit(state), tally, state.parent)


def _inside_store(directory: Path, stores: list[Path]) -> bool:
    return any(
        directory == s / "world-model" or s / "world-model" in directory.parents for s in stores
    )


def _check_published(marker: Path) -> list[Finding]:
    """A published folder's files must hash to the address in its `.version`."""
    directory = marker.parent
    node = directory.parent.name if directory.name == "published" else directory.name

    def finding(position: str, message: str) -> list[Finding]:
        return [Finding(file=str(directory), position=position, node=node, message=message)]

    try:
        stated = read_limited(marker, 1 << 10).decode("utf-8", errors="replace").strip()
        files = read_tree(directory)
    except JSONInputError as exc:
        return finding(".version", str(exc))
    except (OSError, PathEscapeError) as exc:
        return finding("-", str(exc))
    files.pop(".version", None)
    try:
        actual = content_address(files)
    except ValueError as exc:  # colliding or non-UTF-8 names
        return finding("-", f"published files cannot be addressed: {exc}")
    if actual != stated:
        return finding(".version", f"published files hash to {actual}, not the recorded {stated}")
    return []


def _cross_check(tally: _Tally) -> None:
    """Every receipt of a run ledger must also be in its node's durable ledger."""
    for path, positions, items in tally.run_ledgers:
        node = path.stem
        if node not in tally.durable:
            continue
        for where, receipt in zip(positions, items, strict=True):
            if str(receipt.get("content_hash")) not in tally.durable[node]:
                tally.findings.append(
                    Finding(
                        file=str(path),
                        position=where,
                        node=node,
                        message="receipt is missing from the durable ledger",
                    )
                )
