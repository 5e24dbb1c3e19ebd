"""The incremental build cache: parsed files, each file's contract-rule findings, Forme's
memo and the last build's key, as checked JSON data.

It lives outside the project, in a folder of the user cache directory named by a digest
of the project's resolved path (the CLI picks the base directory). Nothing in it is ever
executed: every file (last.json, parse.json, checks.json, wiring.json) is plain orjson
data with a header (cache format and IR layout, prosec version, config key), decoded by
`cache_codec` against the IR's type hints. Loading
says why the cache cannot be used, so the build can print the reason it falls back to a
full rebuild; a damaged or foreign file is such a reason, never an error.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson
from prosec.runtime.fsio import atomic_write_bytes

from . import __version__
from .cache_codec import CodecError, decoder, encoder, schema
from .config import Config
from .diagnostics import Diagnostic
from .discover import text_digest
from .ir import SourceFile
from .passes.forme import incremental
from .passes.forme.incremental import Wiring
from .passes.tools import HostCheck

LAST_FILE = "last.json"
PARSE_FILE = "parse.json"
WIRING_FILE = "wiring.json"  # Forme's memo (compiler/passes/forme/incremental.py)
CHECKS_FILE = "checks.json"  # each file's contract-rule findings (compiler/rules)
# 1: pickles in dist/.cache/ (never read); 2: source texts kept; 3: parse entries as JSON
# trees; 4: the Forme memo's per-contract results as JSON trees
FORMAT = 5
_HEADER_KEYS = {"format": int, "schema": str, "prosec": str, "config": str}
_VERSION = re.compile(r"[0-9A-Za-z.+!_-]{1,40}")  # printed in a reason, so kept plain


def input_key(texts: list[tuple[str, str]], config: Config) -> str:
    """The key of a whole build: every source and its content, the version, the config."""
    digest = hashlib.sha256(f"{__version__}\0{config.cache_key()}".encode())
    for path, text in sorted(texts):
        digest.update(f"\0{path}\0".encode())
        digest.update(bytes.fromhex(text_digest(text)))
    return digest.hexdigest()


def project_dir(base: Path, root: Path) -> Path:
    """The cache folder of the project at `root` under the cache base directory."""
    return base / hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True, kw_only=True)
class LastBuild:
    """What the previous successful build wrote, to recognize a no-op rebuild."""

    key: str
    output_sha: str
    host_checks: tuple[HostCheck, ...]
    diagnostics: tuple[Diagnostic, ...]
    summary: Mapping[str, int]
    imports: tuple[tuple[str, str], ...] = ()  # (path, sha256) of each dependency file read


@dataclass(frozen=True, slots=True, kw_only=True)
class ParseEntry:
    """One parsed source and its own parse diagnostics, for one content digest."""

    digest: str
    source: SourceFile
    diagnostics: tuple[Diagnostic, ...]


class CheckStore:
    """Each file's contract-rule findings under its `rules.file_key`, as `checks.json`
    holds them (kept encoded until asked for) and as this build found them."""

    def __init__(self, encoded: dict[str, Any]) -> None:
        self._encoded = encoded  # path → [key, encoded findings]
        self._fresh: dict[str, tuple[str, tuple[Diagnostic, ...]]] = {}

    def get(self, path: str, key: str) -> tuple[Diagnostic, ...] | None:
        fresh = self._fresh.get(path)
        if fresh is not None:
            return fresh[1] if fresh[0] == key else None
        entry = self._encoded.get(path)
        if type(entry) is not list or len(entry) != 2 or entry[0] != key:
            return None
        try:
            found: tuple[Diagnostic, ...] = decoder(tuple[Diagnostic, ...])(entry[1])
        except (CodecError, RecursionError):
            return None  # checked again, and kept anew
        return found

    def put(self, path: str, key: str, found: tuple[Diagnostic, ...]) -> None:
        self._fresh[path] = (key, found)

    def document(self, keep: set[str]) -> dict[str, Any]:
        kept: dict[str, Any] = {}
        for path in sorted(keep):
            fresh = self._fresh.get(path)
            if fresh is None:
                if path in self._encoded:
                    kept[path] = self._encoded[path]
                continue
            try:
                kept[path] = [fresh[0], encoder(tuple[Diagnostic, ...])(fresh[1])]
            except (CodecError, RecursionError):
                continue  # checked again next time
        return kept


class _Unreadable(Exception):
    """A cache file that is not what prosec writes (the message says which and why)."""


@dataclass
class BuildCache:
    """Parsed files by (path, content hash), valid for one prosec version and config.

    Two files: `last.json` (small: the previous build's key, read on every build) and
    `parse.json` (the parsed sources, read only when something must be compiled). Each
    entry is stored as its own JSON text (a string in the file's `entries` object), read
    back and decoded one at a time: what a rebuild keeps of an unchanged entry is that
    text (saved again as it is), never its parsed JSON tree (7× the memory).
    """

    directory: Path
    header: dict[str, Any]
    last: LastBuild | None = None
    reason: str = ""  # why the cache could not be used ("" when it was loaded)
    wiring: Wiring | None = None  # this build's Forme memo, saved with the rest
    _entries: dict[str, ParseEntry] | None = None
    _checks: CheckStore | None = None
    _encoded: dict[str, str] = field(default_factory=dict)  # path → entry's JSON as read

    @classmethod
    def open(cls, base: Path, root: Path, config: Config) -> BuildCache:
        """The cache of the project at `root` under `base`, with its last build if usable."""
        cache = cls(directory=project_dir(base, root), header=_header(config))
        try:
            stale, payload = cache._read(LAST_FILE, "last")
            if not stale:
                cache.last = _decode_last(payload)
        except FileNotFoundError:
            stale = "no build cache yet"
        except _Unreadable as exc:
            stale = _unreadable(exc)
        if stale:
            cache.reason, cache._entries = stale, {}
        return cache

    @property
    def entries(self) -> dict[str, ParseEntry]:
        if self._entries is None:
            self._entries = {}
            try:
                stale, payload = self._read(PARSE_FILE, "entries")
                if stale:
                    self.reason = stale
                else:
                    self._entries, self._encoded = _decode_entries(payload)
            except FileNotFoundError:
                self.reason = f"the build cache is incomplete ({PARSE_FILE} is missing)"
            except _Unreadable as exc:
                self.reason = _unreadable(exc)
        return self._entries

    @property
    def checks(self) -> CheckStore:
        """The contract rules' findings of the last build (none when the cache is not
        usable or `checks.json` is not what prosec writes: then every file is checked)."""
        if self._checks is None:
            encoded: dict[str, Any] = {}
            if not self.reason:
                try:
                    stale, payload = self._read(CHECKS_FILE, "checks")
                    if not stale and type(payload) is dict:
                        encoded = payload
                except (FileNotFoundError, _Unreadable):
                    pass
            self._checks = CheckStore(encoded)
        return self._checks

    def last_wiring(self) -> Wiring | None:
        """The last build's Forme memo, or None when there is none that can be trusted
        (then the build wires the project whole, as a cold build does)."""
        if self.reason:
            return None
        try:
            stale, payload = self._read(WIRING_FILE, "wiring")
        except (FileNotFoundError, _Unreadable):
            return None
        return None if stale else incremental.decode(payload)

    def get(self, path: str, digest: str, text: str) -> tuple[SourceFile, list[Diagnostic]] | None:
        """The parse of `text` (content digest `digest`) at `path`, when kept. The file
        keeps no source text (the build has just read it: the digest says it is the same),
        so a source read back gets `text` again."""
        entry = self.entries.get(path)
        if entry is None or entry.digest != digest:
            return None
        source = entry.source
        if source.text != text:
            source = replace(source, text=text)
        return source, list(entry.diagnostics)

    def put(self, path: str, digest: str, source: SourceFile, found: list[Diagnostic]) -> None:
        self.entries[path] = ParseEntry(digest=digest, source=source, diagnostics=tuple(found))
        self._encoded.pop(path, None)

    def save(self, keep: set[str]) -> str:
        """Write every file atomically, forgetting sources no longer in the project.

        Returns "" or why the cache could not be written: a cache is an optimization, so
        a read-only or full cache directory does not fail the build.
        """
        entries = {}
        for path in sorted(keep & self.entries.keys()):
            encoded = self._encoded.get(path)
            if encoded is None:
                try:
                    encoded = _encode_entry(self.entries[path])
                except (CodecError, RecursionError, orjson.JSONEncodeError):
                    continue  # e.g. YAML the codec or orjson cannot store: parsed again
            entries[path] = encoded
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(self.directory / PARSE_FILE, _dump_entries(self.header, entries))
            if self.wiring is not None:
                memo = {"header": self.header, "wiring": self.wiring.document()}
                atomic_write_bytes(self.directory / WIRING_FILE, orjson.dumps(memo))
            if self._checks is not None:
                checks = {"header": self.header, "checks": self._checks.document(keep)}
                atomic_write_bytes(self.directory / CHECKS_FILE, orjson.dumps(checks))
            last = _encode_last(self.last) if self.last is not None else None
            atomic_write_bytes(
                self.directory / LAST_FILE, orjson.dumps({"header": self.header, "last": last})
            )
        except OSError as exc:
            return f"the build cache could not be saved ({exc.strerror or exc})"
        return ""

    def _read(self, name: str, key: str) -> tuple[str, Any]:
        """(why the file cannot be used or "", its payload); FileNotFoundError when absent."""
        try:
            data = orjson.loads((self.directory / name).read_bytes())
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise _Unreadable(f"{name}: {exc.strerror or 'cannot be read'}") from None
        except orjson.JSONDecodeError:
            raise _Unreadable(f"{name}: not valid JSON") from None
        if type(data) is not dict or data.keys() != {"header", key}:
            raise _Unreadable(f"{name}: not a prosec build cache")
        return _stale(data["header"], self.header, name), data[key]


def _header(config: Config) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "schema": _schema(),
        "prosec": __version__,
        "config": config.cache_key(),
    }


@functools.cache
def _schema() -> str:
    return schema(LastBuild, ParseEntry)


def _stale(found: Any, expected: dict[str, Any], name: str) -> str:
    """Why a well-formed header does not match this build ("" when it does)."""
    if (
        type(found) is not dict
        or found.keys() != _HEADER_KEYS.keys()
        or any(type(found[k]) is not kind for k, kind in _HEADER_KEYS.items())
        or not _VERSION.fullmatch(found["prosec"])
    ):
        raise _Unreadable(f"{name}: malformed header")
    if found["format"] != expected["format"]:
        return "the build cache has an old format"
    if found["prosec"] != expected["prosec"]:
        return f"prosec changed version ({found['prosec']} → {expected['prosec']})"
    if found["schema"] != expected["schema"]:
        return "the build cache has an old format"
    if found["config"] != expected["config"]:
        return "prose.toml or the command-line settings changed"
    return ""


def _unreadable(exc: _Unreadable) -> str:
    return f"the build cache is unreadable ({exc})"


def _encode_last(last: LastBuild) -> Any:
    return encoder(LastBuild)(last)


def _decode_last(payload: Any) -> LastBuild | None:
    try:
        last = decoder(LastBuild | None)(payload)
    except CodecError as exc:
        raise _Unreadable(f"{LAST_FILE}: {exc}") from None
    except RecursionError:
        raise _Unreadable(f"{LAST_FILE}: nested too deeply") from None
    return last if isinstance(last, LastBuild) else None


def _encode_entry(entry: ParseEntry) -> str:
    """The entry as JSON text, without its source's text (`get` puts it back)."""
    data = encoder(ParseEntry)(replace(entry, source=replace(entry.source, text="")))
    return orjson.dumps(data).decode()


def _decode_entries(payload: Any) -> tuple[dict[str, ParseEntry], dict[str, str]]:
    """Every entry decoded (all or nothing: one bad entry discredits the file)."""
    if type(payload) is not dict:
        raise _Unreadable(f"{PARSE_FILE}: entries are not an object")
    decode = decoder(ParseEntry)
    entries: dict[str, ParseEntry] = {}
    try:
        for path, encoded in payload.items():
            if type(encoded) is not str:
                raise CodecError("an entry is not stored as JSON text")
            entry = decode(orjson.loads(encoded))
            if entry.source.path != path:
                raise CodecError("an entry is filed under another path")
            entries[path] = entry
    except orjson.JSONDecodeError:
        raise _Unreadable(f"{PARSE_FILE}: not valid JSON") from None
    except CodecError as exc:
        raise _Unreadable(f"{PARSE_FILE}: {exc}") from None
    except RecursionError:
        raise _Unreadable(f"{PARSE_FILE}: nested too deeply") from None
    return entries, payload


def _dump_entries(header: dict[str, Any], entries: dict[str, str]) -> bytes:
    return orjson.dumps({"header": header, "entries": entries})
