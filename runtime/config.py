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

[test.judge]        # `prosec test`: decides the assertions no check lowers (agent shape)
command = "my-agent --print"
```

Other tables (lint settings, wiring pins) belong to the compiler and are ignored here;
the whole file is checked against schemas/config.schema.json by `project_toml`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .backends.registry import BACKEND_NAMES
from .project_toml import ConfigError, load

__all__ = ["BACKENDS", "ConfigError", "RunConfig", "load_config", "run_config"]

BACKENDS = BACKEND_NAMES  # the registry's names (runtime/backends/registry.py)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunConfig:
    """The runtime settings from prose.toml (CLI flags override them in the CLI)."""

    jobs: int = 2
    timeout: float = 600.0
    backend: str = "filesystem"
    render_default: Mapping[str, Any] | None = None
    render_nodes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    cadence: Mapping[str, str] = field(default_factory=dict)
    judge: Mapping[str, Any] | None = None  # `[test.judge]`: the judge of `prosec test`


def load_config(root: Path) -> RunConfig:
    """Read and check `ROOT/prose.toml` (project_toml.load); a missing file means every default."""
    checked = load(root)
    return RunConfig() if checked is None else run_config(checked.data)


def run_config(data: Mapping[str, Any]) -> RunConfig:
    """The runtime's settings from an already-checked prose.toml document."""
    run = data.get("run", {})
    renders = dict(data.get("render", {}))
    default = renders.pop("default", None)
    return RunConfig(
        jobs=run.get("jobs", 2),
        timeout=float(run.get("timeout", 600)),
        backend=run.get("backend", "filesystem"),
        render_default=default,
        render_nodes=renders,
        cadence=dict(data.get("cadence", {})),
        judge=data.get("test", {}).get("judge"),
    )
