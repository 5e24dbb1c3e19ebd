"""prose.toml: the runtime's settings (`[run]`, `[render.*]`, `[cadence]`), with defaults.

```toml
[run]
jobs = 2            # renders in parallel (default: 2)
timeout = 600       # seconds a render may take before it fails with `timeout`
backend = "filesystem"   # filesystem | sqlite | postgres | in-context

[render.default]    # used by every node without its own table
kind = "command"    # command | python | agent | replay | ingress
command = "python3 renders/{node}.py"

[render.digest]     # one node's binding; see runtime/renders/__init__.py for keys
kind = "python"
callable = "renders.digest:render"

[cadence]           # self-driven cadences (ISO 8601 or cron:), when the intent has none
digest = "P1D"
```

Other tables (lint settings, wiring pins) belong to the compiler and are ignored here.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .backends.registry import BACKEND_NAMES
from .cadence import parse_cadence

__all__ = ["ConfigError", "RunConfig", "load_config"]

BACKENDS = BACKEND_NAMES  # the registry's names (runtime/backends/registry.py)


class ConfigError(ValueError):
    """A prose.toml setting the runtime cannot use; the message names file and key."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunConfig:
    """The runtime settings from prose.toml (CLI flags override them in the CLI)."""

    jobs: int = 2
    timeout: float = 600.0
    backend: str = "filesystem"
    render_default: Mapping[str, Any] | None = None
    render_nodes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    cadence: Mapping[str, str] = field(default_factory=dict)


def load_config(root: Path) -> RunConfig:
    """Read `ROOT/prose.toml`; a missing file means every default."""
    path = root / "prose.toml"
    if not path.exists():
        return RunConfig()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8") from exc
    run = _table(data, "run", path)
    jobs = run.get("jobs", 2)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ConfigError(f"{path}: [run] jobs must be a positive integer")
    timeout = run.get("timeout", 600)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ConfigError(f"{path}: [run] timeout must be a positive number of seconds")
    backend = run.get("backend", "filesystem")
    if backend not in BACKENDS:
        raise ConfigError(f"{path}: [run] backend must be one of {', '.join(BACKENDS)}")
    renders = _table(data, "render", path)
    nodes: dict[str, Mapping[str, Any]] = {}
    default = None
    for name, table in renders.items():
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [render.{name}] must be a table")
        if name == "default":
            default = table
        else:
            nodes[name] = table
    cadence = _table(data, "cadence", path)
    for name, value in cadence.items():
        if not isinstance(value, str):
            raise ConfigError(
                f"{path}: [cadence] {name} must be a string like 'PT6H' or 'cron:0 9 * * 1-5'"
            )
        try:
            parse_cadence(value)
        except ValueError as exc:
            raise ConfigError(f"{path}: [cadence] {name}: {exc}") from None
    return RunConfig(
        jobs=jobs,
        timeout=float(timeout),
        backend=backend,
        render_default=default,
        render_nodes=nodes,
        cadence=dict(cadence),
    )


def _table(data: Mapping[str, Any], key: str, path: Path) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: [{key}] must be a table")
    return value
