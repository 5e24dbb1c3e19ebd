"""The compiler's settings: `prose.toml` at the OpenProse root (read and checked by the
runtime's `project_toml`), with documented defaults and command-line overrides."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from prosec.runtime.project_toml import (
    CONFIG_NAME,
    ROOT_MARKERS,
    ConfigError,
    ProjectToml,
    dependency_urls,
    find_root,
)
from prosec.runtime.project_toml import load as load_checked

from .diagnostics import Severity
from .values import value

__all__ = ["CONFIG_NAME", "ROOT_MARKERS", "Config", "ConfigError", "WiringPin", "find_root", "load"]


@value(kw_only=True)
class WiringPin:
    """`[[wiring.pin]]`: settle one need of `subscriber` on `producer`'s `facet`."""

    subscriber: str
    need: str
    producer: str
    facet: str = "@atomic"
    line: int = 1  # line of its `[[wiring.pin]]` header in prose.toml, for diagnostics


@value(kw_only=True)
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
    # `[deps]`: where `prosec install` clones from (`host[/owner[/repo]]` → URL or path)
    dependency_urls: Mapping[str, str] = field(default_factory=dict)
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


def load(start: Path) -> Config:
    """The config of the project containing `start`; no file means the defaults.

    The file is read and checked by the runtime's `project_toml` (ConfigError when bad);
    this only turns the checked data into a `Config`."""
    root = find_root(start)
    checked = load_checked(root) if root is not None else None
    if root is None or checked is None:
        return Config(root=root)
    return from_checked(checked, root)


def from_checked(checked: ProjectToml, root: Path) -> Config:
    """The compiler's settings from a prose.toml that passed the schema."""
    data = checked.data
    lint = data.get("lint", {})
    tools = data.get("tools", {})
    build = data.get("build", {})
    pins = data.get("wiring", {}).get("pin", [])
    return Config(
        path=checked.path,
        root=root,
        select=tuple(lint.get("select", ())),
        ignore=tuple(lint.get("ignore", ())),
        severity={code: Severity(value) for code, value in lint.get("severity", {}).items()},
        strict=lint.get("strict", False),
        pins=tuple(
            WiringPin(
                subscriber=pin["subscriber"],
                need=pin["need"],
                producer=pin["producer"],
                facet=pin.get("facet", "@atomic"),
                line=checked.line_of(("wiring", "pin", index)) or 1,
            )
            for index, pin in enumerate(pins)
        ),
        offline_tools=tools.get("offline", False),
        mcp_registries=tuple(tools.get("mcp_registries", ())),
        skill_paths=tuple(tools.get("skill_paths", ())),
        render=data.get("render", {}),
        source=build.get("source"),
        emit_artifacts=build.get("emit_artifacts", False),
        dependency_urls=dependency_urls(checked),
        raw=data,
    )
