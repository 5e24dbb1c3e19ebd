"""The incremental build cache in `dist/.cache/`: parsed files and the last build's key.

Keyed by (file content hash, prosec version, config digest). Loading says why it cannot
be used, so the build can print the reason it falls back to a full rebuild.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__
from .config import Config
from .diagnostics import Diagnostic
from .ir import SourceFile
from .passes.tools import HostCheck

CACHE_DIR = ".cache"
LAST_FILE = "last.pickle"
PARSE_FILE = "parse.pickle"
FORMAT = 1


def config_digest(config: Config) -> str:
    """Everything in the config that can change compiled output or its diagnostics."""
    relevant = (
        config.select,
        config.ignore,
        sorted((k, v.value) for k, v in config.severity.items()),
        config.strict,
        config.pins,
        config.offline_tools,
        config.mcp_registries,
        config.skill_paths,
        config.source,
    )
    return hashlib.sha256(repr(relevant).encode()).hexdigest()


def input_key(texts: list[tuple[str, str]], config: Config) -> str:
    """The key of a whole build: every source and its content, the version, the config."""
    digest = hashlib.sha256(f"{__version__}\0{config_digest(config)}".encode())
    for path, text in sorted(texts):
        digest.update(f"\0{path}\0".encode())
        digest.update(hashlib.sha256(text.encode()).digest())
    return digest.hexdigest()


@dataclass
class LastBuild:
    """What the previous successful build wrote, to recognize a no-op rebuild."""

    key: str
    output_sha: str
    host_checks: tuple[HostCheck, ...]
    diagnostics: tuple[Diagnostic, ...]
    summary: dict[str, int]


@dataclass
class BuildCache:
    """Parsed files by (path, content hash), valid for one prosec version and config.

    Two files: `last.pickle` (small: the previous build's key, read on every build) and
    `parse.pickle` (the parsed sources, read only when something must be compiled).
    """

    directory: Path
    header: tuple[int, str, str] = (FORMAT, __version__, "")
    last: LastBuild | None = None
    reason: str = ""  # why the cache could not be used ("" when it was loaded)
    _entries: dict[str, tuple[str, SourceFile, list[Diagnostic]]] | None = None

    @classmethod
    def open(cls, dist: Path, config: Config) -> BuildCache:
        cache = cls(directory=dist / CACHE_DIR, header=(FORMAT, __version__, config_digest(config)))
        data = _load(cache.directory / LAST_FILE)
        if data is None:
            cache.reason = "no build cache yet"
            cache._entries = {}
            return cache
        header = data.get("header") if isinstance(data, dict) else None
        if not isinstance(header, tuple) or len(header) != 3 or header[0] != FORMAT:
            cache.reason = "the build cache has an old or unreadable format"
        elif header[1] != __version__:
            cache.reason = f"prosec changed version ({header[1]} → {__version__})"
        elif header[2] != cache.header[2]:
            cache.reason = "prose.toml or the command-line settings changed"
        else:
            last = data.get("last")
            cache.last = last if isinstance(last, LastBuild) else None
            return cache
        cache._entries = {}
        return cache

    @property
    def entries(self) -> dict[str, tuple[str, SourceFile, list[Diagnostic]]]:
        if self._entries is None:
            data = _load(self.directory / PARSE_FILE)
            found = data.get("entries") if isinstance(data, dict) else None
            valid = isinstance(data, dict) and data.get("header") == self.header
            self._entries = found if valid and isinstance(found, dict) else {}
        return self._entries

    def get(self, path: str, digest: str) -> tuple[SourceFile, list[Diagnostic]] | None:
        entry = self.entries.get(path)
        if entry is None or entry[0] != digest:
            return None
        return entry[1], entry[2]

    def put(self, path: str, digest: str, source: SourceFile, found: list[Diagnostic]) -> None:
        self.entries[path] = (digest, source, found)

    def save(self, keep: set[str]) -> None:
        """Write both files atomically, forgetting sources no longer in the project."""
        entries = {p: e for p, e in self.entries.items() if p in keep}
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / ".gitignore").write_text("*\n", encoding="utf-8")
        _dump(self.directory / PARSE_FILE, {"header": self.header, "entries": entries})
        _dump(self.directory / LAST_FILE, {"header": self.header, "last": self.last})


def _load(path: Path) -> Any:
    if not path.is_file():
        return None
    try:
        with path.open("rb") as handle:
            return pickle.load(handle)
    except Exception:  # a torn or foreign file is just a cold cache
        return {"header": None}


def _dump(path: Path, data: Any) -> None:
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".cache-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            pickle.dump(data, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
