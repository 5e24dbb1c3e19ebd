"""Project configuration: `prose.toml` at the OpenProse root, with documented defaults."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .diagnostics import CODES, Severity

CONFIG_NAME = "prose.toml"
ROOT_MARKERS = (CONFIG_NAME, "prose.lock")


class ConfigError(Exception):
    """`prose.toml` is unreadable or holds an invalid setting (message names file and key)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WiringPin:
    """`[[wiring.pin]]`: settle one need of `subscriber` on `producer`'s `facet`."""

    subscriber: str
    need: str
    producer: str
    facet: str = "@atomic"
    line: int = 1  # line of its `[[wiring.pin]]` header in prose.toml, for diagnostics


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """Settings after merging defaults, `prose.toml` and CLI flags (CLI wins)."""

    path: Path | None = None  # the prose.toml read, if any
    root: Path | None = None  # the OpenProse root (directory of prose.toml / prose.lock)
    select: tuple[str, ...] = ()  # empty: every code
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    strict: bool = False
    pins: tuple[WiringPin, ...] = ()
    offline_tools: bool = False
    mcp_registries: tuple[str, ...] = ()
    skill_paths: tuple[str, ...] = ()
    render: Mapping[str, Any] = field(default_factory=dict)  # runtime-owned tables, kept raw
    source: str | None = None  # `[build] source`: source root relative to the project root
    emit_artifacts: bool = False  # `[build] emit_artifacts`
    raw: Mapping[str, Any] = field(default_factory=dict)

    def with_overrides(self, **changes: Any) -> Config:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def cache_key(self) -> str:
        """A digest of every setting that can change compiled output or its diagnostics.

        Derived from the fields, so a new setting joins the key without anyone listing
        it. Only `path` is left out: its directory is `root`, its name is always
        prose.toml and its content is in `raw` and the typed fields. Everything else
        stays in, runtime tables too: a spurious full rebuild is cheap, a stale manifest
        is not. The values are hashed, never stored.
        """
        import hashlib
        from dataclasses import fields

        def canonical(value: Any) -> Any:  # equal settings, equal key, whatever the order
            if isinstance(value, Mapping):
                return sorted((repr(k), canonical(v)) for k, v in value.items())
            if isinstance(value, list | tuple):
                return [canonical(v) for v in value]
            return value

        relevant = [(f.name, canonical(getattr(self, f.name))) for f in fields(self)]
        kept = [(name, value) for name, value in relevant if name != "path"]
        return hashlib.sha256(repr(kept).encode()).hexdigest()

    def enabled(self, code: str) -> bool:
        """Whether `code` survives `select` (empty: all) and `ignore`; `prefix*` matches."""
        if self.select and not any(_matches(code, p) for p in self.select):
            return False
        return not any(_matches(code, p) for p in self.ignore)


def _matches(code: str, pattern: str) -> bool:
    return code.startswith(pattern[:-1]) if pattern.endswith("*") else code == pattern


def find_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding `prose.toml` or `prose.lock`."""
    start = start.resolve()
    if start.is_file():
        start = start.parent
    for candidate in (start, *start.parents):
        if any((candidate / marker).is_file() for marker in ROOT_MARKERS):
            return candidate
    return None


def load(start: Path) -> Config:
    """Load the config of the project containing `start`; no file means the defaults."""
    root = find_root(start)
    if root is None or not (root / CONFIG_NAME).is_file():
        return Config(root=root)
    path = root / CONFIG_NAME
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return parse(data, path, root, text)


def parse(data: Mapping[str, Any], path: Path, root: Path, text: str = "") -> Config:
    lint = _table(data, "lint", path)
    wiring = _table(data, "wiring", path)
    tools = _table(data, "tools", path)
    build = _table(data, "build", path)
    source = build.get("source")
    if source is not None and (not isinstance(source, str) or not source.strip()):
        raise ConfigError(f"{path}: build.source: must be a non-empty string")
    pin_lines = [
        number
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip().replace(" ", "") == "[[wiring.pin]]"
    ]
    severity: dict[str, Severity] = {}
    for code, value in _table(lint, "severity", path, "lint.").items():
        if code not in CODES:
            raise ConfigError(f"{path}: lint.severity.{code}: unknown diagnostic code")
        try:
            severity[code] = Severity(str(value))
        except ValueError:
            raise ConfigError(
                f"{path}: lint.severity.{code}: must be error, warning or info, not {value!r}"
            ) from None
    return Config(
        path=path,
        root=root,
        select=_codes(lint, "select", path),
        ignore=_codes(lint, "ignore", path),
        severity=severity,
        strict=_bool(lint, "strict", path, "lint."),
        pins=tuple(
            _pin(entry, path, i, pin_lines[i] if i < len(pin_lines) else 1)
            for i, entry in enumerate(_list(wiring, "pin", path, "wiring."))
        ),
        offline_tools=_bool(tools, "offline", path, "tools."),
        mcp_registries=_strings(tools, "mcp_registries", path, "tools."),
        skill_paths=_strings(tools, "skill_paths", path, "tools."),
        render=_table(data, "render", path),
        source=source,
        emit_artifacts=_bool(build, "emit_artifacts", path, "build."),
        raw=data,
    )


def _table(data: Mapping[str, Any], key: str, path: Path, prefix: str = "") -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{path}: {prefix}{key}: must be a table")
    return value


def _list(data: Mapping[str, Any], key: str, path: Path, prefix: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise ConfigError(f"{path}: {prefix}{key}: must be an array")
    return value


def _strings(data: Mapping[str, Any], key: str, path: Path, prefix: str) -> tuple[str, ...]:
    values = _list(data, key, path, prefix)
    if not all(isinstance(v, str) for v in values):
        raise ConfigError(f"{path}: {prefix}{key}: must be an array of strings")
    return tuple(values)


def _codes(lint: Mapping[str, Any], key: str, path: Path) -> tuple[str, ...]:
    codes = _strings(lint, key, path, "lint.")
    for code in codes:
        if not any(_matches(known, code) for known in CODES):
            raise ConfigError(f"{path}: lint.{key}: unknown diagnostic code {code!r}")
    return codes


def _bool(data: Mapping[str, Any], key: str, path: Path, prefix: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(f"{path}: {prefix}{key}: must be true or false")
    return value


def _pin(entry: Any, path: Path, index: int, line: int) -> WiringPin:
    where = f"{path}: wiring.pin[{index}]"
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where}: must be a table")
    missing = [k for k in ("subscriber", "need", "producer") if not isinstance(entry.get(k), str)]
    if missing:
        raise ConfigError(f"{where}: missing string key(s): {', '.join(missing)}")
    return WiringPin(
        subscriber=entry["subscriber"],
        need=entry["need"],
        producer=entry["producer"],
        facet=str(entry.get("facet", "@atomic")),
        line=line,
    )
