"""The lint cache: what `prosec lint` last reported for a project, and every file's parse.

As ruff does, a re-lint of unchanged files reads them, hashes them and prints what the
last lint found, parsing nothing. Diagnostics here depend on the whole project (wiring,
duplicate names), so a project's result is keyed by everything it was computed from:
the prosec version, the configuration (`Config.cache_key`, so the command-line flags
too), the directory display paths are relative to, the files asked about, every member
file's display path and content digest, `prose.lock` and the `deps/` folder; the
dependency files the lint read are re-hashed before a result is trusted. When anything
differs the project is analysed again, but each file whose content is unchanged keeps
its parse (keyed by display path and content digest alone), so an edit re-parses one file.

The cache lives beside the build cache (the user cache directory, or `PROSEC_CACHE_DIR`),
in the same per-project folder: `lint.json` (the last few results: small, read on every
lint) and `lint-parse.json` (the parses, read only when something must be analysed).
Both are plain JSON data decoded by `cache_codec` against the types, written atomically
(temporary file and rename; not fsynced: a cache is rebuilt, never trusted blindly). A
missing, damaged, foreign or stale file is ignored (the lint runs cold), never an error.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from prosec.runtime.fsio import atomic_write_bytes

from . import __version__
from .cache_codec import CodecError, decoder, encoder, schema
from .config import Config
from .diagnostics import Diagnostic
from .ir import SourceFile

RESULTS_FILE = "lint.json"
PARSES_FILE = "lint-parse.json"
FORMAT = 1
KEPT_RESULTS = 4  # results remembered per project (`lint FILE`, `lint DIR`, other flags)


def project_dir(base: Path, root: Path) -> Path:
    """The project's cache folder, the one the build cache uses (`cache.project_dir`;
    not imported, so a lint answered from the cache loads none of the build's modules)."""
    return base / hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True, kw_only=True)
class ParseEntry:
    """One parsed source and its own parse diagnostics, for one content digest."""

    digest: str
    source: SourceFile
    diagnostics: tuple[Diagnostic, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class LintRecord:
    """One project's reported diagnostics for one input key."""

    key: str
    imports: tuple[tuple[str, str], ...]  # (absolute path, sha256) of each dependency read
    diagnostics: tuple[Diagnostic, ...]


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def result_key(
    config: Config,
    root: Path,
    base: Path,
    shown: Collection[str],
    texts: Sequence[tuple[str, str]],
    unreadable: Collection[str] = (),
) -> str:
    """The input key of one project's lint (see the module docstring)."""
    h = hashlib.sha256(f"{FORMAT}\0{__version__}\0{config.cache_key()}\0{base}".encode())
    for name in sorted(shown):
        h.update(f"\0shown\0{name}".encode())
    for name in sorted(unreadable):
        h.update(f"\0unreadable\0{name}".encode())
    for path, text in sorted(texts):
        h.update(f"\0{path}\0".encode())
        h.update(hashlib.sha256(text.encode()).digest())
    h.update(b"\0lock\0" + _file_digest(root / "prose.lock").encode())
    try:  # installing or removing a dependency touches deps/ itself
        stat = os.stat(root / "deps")
        h.update(f"\0deps\0{stat.st_mtime_ns}\0{stat.st_ino}".encode())
    except OSError:
        h.update(b"\0deps\0none")
    return h.hexdigest()


def _file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


@dataclass
class LintCache:
    """One project's lint cache (results and parses); see the module docstring."""

    directory: Path
    records: list[LintRecord] = field(default_factory=list)
    _parses: dict[str, ParseEntry] | None = None
    _encoded: dict[str, Any] = field(default_factory=dict)  # path → entry as read
    _dirty: bool = False

    @classmethod
    def open(cls, base: Path, root: Path) -> LintCache:
        cache = cls(directory=project_dir(base, root))
        payload = _read(cache.directory / RESULTS_FILE, "results")
        if payload is not None:
            try:
                cache.records = list(decoder(tuple[LintRecord, ...])(payload))
            except (CodecError, RecursionError):
                cache.records = []
        return cache

    # -- results -------------------------------------------------------------------------

    def result(self, key: str) -> tuple[Diagnostic, ...] | None:
        """What the lint with this input key reported, if its dependency files are as
        they were."""
        for record in self.records:
            if record.key == key:
                if all(_file_digest(Path(p)) == d for p, d in record.imports):
                    return record.diagnostics
                return None
        return None

    def remember(
        self, key: str, diagnostics: Sequence[Diagnostic], imports: Sequence[Path]
    ) -> None:
        read = tuple((str(p), _file_digest(p)) for p in imports)
        record = LintRecord(key=key, imports=read, diagnostics=tuple(diagnostics))
        others = [r for r in self.records if r.key != key]
        self.records = [record, *others][:KEPT_RESULTS]
        self._dirty = True

    # -- parses (the pipeline's ParseCache protocol) ---------------------------------------

    @property
    def parses(self) -> dict[str, ParseEntry]:
        if self._parses is None:
            self._parses = {}
            payload = _read(self.directory / PARSES_FILE, "entries")
            if type(payload) is dict:
                try:
                    decode = decoder(ParseEntry)
                    entries = {path: decode(encoded) for path, encoded in payload.items()}
                    if all(e.source.path == path for path, e in entries.items()):
                        self._parses, self._encoded = entries, payload
                except (CodecError, RecursionError):
                    pass  # one bad entry discredits the file: parse everything again
        return self._parses

    def get(self, path: str, digest: str) -> tuple[SourceFile, list[Diagnostic]] | None:
        entry = self.parses.get(path)
        if entry is None or entry.digest != digest:
            return None
        return entry.source, list(entry.diagnostics)

    def put(self, path: str, digest: str, source: SourceFile, found: list[Diagnostic]) -> None:
        self.parses[path] = ParseEntry(digest=digest, source=source, diagnostics=tuple(found))
        self._encoded.pop(path, None)
        self._dirty = True

    # -- writing ---------------------------------------------------------------------------

    def save(self, keep: Collection[str]) -> None:
        """Write both files (atomically), forgetting parses of files no longer in the
        project; a cache that cannot be written is skipped silently."""
        if not self._dirty:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            if self._parses is not None:
                entries = {}
                for path in sorted(set(keep) & self._parses.keys()):
                    encoded = self._encoded.get(path)
                    if encoded is None:
                        try:
                            encoded = encoder(ParseEntry)(self._parses[path])
                        except (CodecError, RecursionError):
                            continue  # e.g. YAML the codec cannot store: parsed next time
                    entries[path] = encoded
                _write(self.directory / PARSES_FILE, "entries", entries)
            records = encoder(tuple[LintRecord, ...])(tuple(self.records))
            _write(self.directory / RESULTS_FILE, "results", records)
        except (OSError, CodecError, RecursionError, orjson.JSONEncodeError):
            return
        self._dirty = False


def _header() -> dict[str, Any]:
    return {"format": FORMAT, "schema": _schema(), "prosec": __version__}


@functools.cache
def _schema() -> str:
    return schema(LintRecord, ParseEntry)


def _read(path: Path, key: str) -> Any:
    """The payload under `key`, or None when the file is missing, damaged or stale."""
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if type(data) is not dict or data.keys() != {"header", key} or data["header"] != _header():
        return None
    return data[key]


def _write(path: Path, key: str, payload: Any) -> None:
    atomic_write_bytes(path, orjson.dumps({"header": _header(), key: payload}), durable=False)
