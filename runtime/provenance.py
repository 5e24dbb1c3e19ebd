"""Provenance: a run's `sources/` and `root.prose.md` are the sources as compiled.

`prosec build` snapshots the text of every source it compiled into a content-addressed
store, `dist/sources/<sha256 hex>` (the text as the compiler read it: UTF-8, line endings
normalized), and lists them in `dist/sources.next.json`:

    {"manifest": "sha256:<of dist/manifest.next.json's bytes>",
     "sources": {"src/keeper.prose.md": "sha256:<hex>", …}}

`prosec activate` promotes that list to `dist/sources.active.json` with the manifest.
A run copies each source from the store (checked by digest) into `runs/{id}/sources/`,
and reports every source whose working file no longer has the compiled digest (edited
after the build): the run uses what was compiled, never the edit. A list whose
`manifest` is not the active manifest's digest (a manifest built elsewhere, or by an
older prosec) is not used: the run copies the working files, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import orjson

from .fsio import atomic_write_bytes, fsync_dir
from .userjson import JSONInputError, loads, read_limited

__all__ = [
    "ACTIVE_LIST",
    "NEXT_LIST",
    "STORE",
    "ProvenanceError",
    "Snapshot",
    "digest_of_text",
    "load_snapshot",
    "promote",
    "snapshot_current",
    "write_snapshot",
]

STORE = "sources"
NEXT_LIST = "sources.next.json"
ACTIVE_LIST = "sources.active.json"
LIST_LIMIT = 64 << 20
SOURCE_LIMIT = 64 << 20
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def digest_of_text(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest_of_bytes(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def normalized(data: bytes) -> str | None:
    """A source file's text as the compiler reads it (None when it is not UTF-8)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _blob(dist: Path, digest: str) -> Path:
    return dist / STORE / digest.removeprefix("sha256:")


def write_snapshot(dist: Path, manifest: bytes, texts: Iterable[tuple[str, str]]) -> None:
    """Store each (path, text) compiled and write `sources.next.json` for `manifest`;
    blobs no list names any more are removed."""
    listed: dict[str, str] = {}
    missing: dict[Path, bytes] = {}  # blob → its bytes, for the blobs the store lacks
    store = dist / STORE
    if store.is_symlink() or (store.exists() and not store.is_dir()):
        store.unlink()  # the store is prosec's own: whatever took its place goes
    # blobs the last list names were written (or read back and checked) by that build: one
    # of them still a regular file of its text's size is taken as it is, not read again
    # (a run checks every blob's digest when it copies it, see `load_snapshot`)
    previous = _read_list(dist / NEXT_LIST) if store.is_dir() else None
    known = set(cast(Mapping[str, str], previous["sources"]).values()) if previous else set()
    folder = os.fspath(store)
    for path, text in texts:
        data = text.encode("utf-8")
        hexdigest = hashlib.sha256(data).hexdigest()
        digest = "sha256:" + hexdigest
        if digest in known and _regular_size(f"{folder}/{hexdigest}") == len(data):
            listed[path] = digest
            continue
        blob = _blob(dist, digest)
        if blob.is_dir() and not blob.is_symlink():
            shutil.rmtree(blob)
        elif blob.is_symlink():
            blob.unlink()
        stored = _read(blob)
        if stored is None or digest_of_bytes(stored) != digest:
            missing[blob] = data
        listed[path] = digest
    if missing:
        store.mkdir(parents=True, exist_ok=True)
        _write_blobs(store, missing)
    document = {"manifest": digest_of_bytes(manifest), "sources": dict(sorted(listed.items()))}
    atomic_write_bytes(dist / NEXT_LIST, _dumps(document))
    _prune(dist)


def _regular_size(path: str) -> int:
    """The size of a regular file (not following a symlink); -1 for anything else."""
    try:
        found = os.lstat(path)
    except OSError:
        return -1
    return found.st_size if stat.S_ISREG(found.st_mode) else -1


def _write_blobs(store: Path, blobs: Mapping[Path, bytes]) -> None:
    """Each blob written as `atomic_write_bytes` writes one (temp file, fsync, rename), in
    phases: every temp file written and synced, then renamed, then the store's directory
    synced once (not once per blob). The list naming them is written after this returns,
    so a crash leaves at worst blobs no list names (pruned) or temp files (leftovers)."""
    staged: list[tuple[Path, Path]] = []
    try:
        for blob, data in blobs.items():
            tmp = blob.with_name(f".{blob.name}.tmp-{secrets.token_hex(4)}-{os.getpid()}")
            staged.append((tmp, blob))
            with open(tmp, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        for tmp, blob in staged:
            os.replace(tmp, blob)
    except BaseException:
        for tmp, _ in staged:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        raise
    fsync_dir(store)


def snapshot_current(dist: Path, manifest: bytes) -> bool:
    """`sources.next.json` belongs to `manifest` and every blob it names is in the store."""
    listed = _read_list(dist / NEXT_LIST)
    if listed is None or listed.get("manifest") != digest_of_bytes(manifest):
        return False
    digests = cast(Mapping[str, str], listed["sources"])
    return all(_blob(dist, digest).is_file() for digest in digests.values())


def promote(dist: Path, manifest: bytes) -> bool:
    """Make `sources.next.json` the active list when it belongs to `manifest` (the
    manifest being activated); else remove a stale active list. True when promoted."""
    listed = _read_list(dist / NEXT_LIST)
    active = dist / ACTIVE_LIST
    if active.is_dir() and not active.is_symlink():
        shutil.rmtree(active)  # prosec's own file: whatever took its place goes
    if listed is None or listed.get("manifest") != digest_of_bytes(manifest):
        active.unlink(missing_ok=True)
        return False
    atomic_write_bytes(active, _dumps(listed))
    return True


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    """The sources a run copies, and what changed in the working tree since the build."""

    texts: Mapping[str, bytes] = field(default_factory=dict)  # path → the compiled bytes
    edited: tuple[str, ...] = ()  # working files whose digest is not the compiled one
    warnings: tuple[str, ...] = ()


class ProvenanceError(ValueError):
    """A compiled source is gone from the store and its working file changed."""


def load_snapshot(root: Path, manifest_digest: str | None, paths: Iterable[str]) -> Snapshot | None:
    """The compiled sources of the active manifest (`manifest_digest`), checked by digest;
    None when the active list is missing or belongs to another manifest."""
    dist = root / "dist"
    listed = _read_list(dist / ACTIVE_LIST)
    if listed is None or manifest_digest is None or listed.get("manifest") != manifest_digest:
        return None
    digests = cast(Mapping[str, str], listed["sources"])
    texts: dict[str, bytes] = {}
    edited: list[str] = []
    warnings: list[str] = []
    for path in paths:
        digest = digests.get(path)
        if digest is None:
            continue
        working, as_compiled = _working(root / path)
        if working == digest:  # the file is as compiled: its blob holds these very bytes
            texts[path] = as_compiled
            continue
        blob = _blob(dist, digest)
        data = _read(blob)
        if data is None or digest_of_bytes(data) != digest:
            raise ProvenanceError(
                f"{path}: the source as compiled is gone ({blob} is missing or does not "
                f"match {digest}) and the file changed since the build; run `prosec "
                "build` and `prosec activate`"
            )
        edited.append(path)
        now = "is gone" if working is None else f"is now {working}"
        warnings.append(
            f"prosec: {root / path} changed after it was compiled ({digest}; it {now}): "
            "this run uses the source as compiled; run `prosec build` and `prosec "
            "activate` to run the edit"
        )
        texts[path] = data
    return Snapshot(texts=texts, edited=tuple(edited), warnings=tuple(warnings))


def _working(path: Path) -> tuple[str | None, bytes]:
    """The working file's digest (None when unreadable) and its bytes as the compiler
    reads them (the text normalized, else the bytes themselves), from one read."""
    data = _read(path)
    if data is None:
        return None, b""
    text = normalized(data)
    if text is None:
        return digest_of_bytes(data), data
    encoded = text.encode("utf-8")
    return digest_of_bytes(encoded), encoded


def _read(path: Path) -> bytes | None:
    try:
        return read_limited(path, SOURCE_LIMIT, what="")
    except JSONInputError:
        return None


def _read_list(path: Path) -> dict[str, object] | None:
    """A sources list, or None when missing, unreadable or not of its shape."""
    try:
        data = loads(read_limited(path, LIST_LIMIT, what=""), source=str(path))
    except JSONInputError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("manifest"), str):
        return None
    sources = data.get("sources")
    if not isinstance(sources, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and _DIGEST.fullmatch(v)
        for k, v in sources.items()
    ):
        return None
    return data


def _prune(dist: Path) -> None:
    keep: set[str] = set()
    for name in (NEXT_LIST, ACTIVE_LIST):
        listed = _read_list(dist / name)
        if listed is not None:
            sources = cast(Mapping[str, str], listed["sources"])
            keep.update(d.removeprefix("sha256:") for d in sources.values())
    store = dist / STORE
    if not store.is_dir():
        return
    for blob in store.iterdir():
        if len(blob.name) == 64 and blob.name not in keep and blob.is_file():
            blob.unlink(missing_ok=True)


def _dumps(document: Mapping[str, object]) -> bytes:
    """Indented, sorted JSON: orjson writes the bytes `json.dumps(…, indent=2,
    sort_keys=True, ensure_ascii=False)` writes for these lists of strings, faster."""
    try:
        return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    except orjson.JSONEncodeError:  # e.g. a path that is not valid Unicode: as before
        return (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
