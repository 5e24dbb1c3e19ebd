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

Two settings also come from `ROOT/.env` and the environment, as the seed says
(`OPENPROSE_DEFAULT_MODEL`, `OPENPROSE_MAX_PARALLEL`). Each is taken from the first layer
that sets it: the CLI flag (`--model`, `--jobs`: `RunConfig.overridden`), `ROOT/.env`,
the process environment, prose.toml (`[run] default_model`, `[run] jobs`), the built-in
default. `RunConfig.origins` says which layer each came from.

Other tables (lint settings, wiring pins) belong to the compiler and are ignored here;
the whole file is checked against schemas/config.schema.json by `project_toml`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .backends.registry import BACKEND_NAMES
from .project_toml import ConfigError, ConfigProblem, DotEnv, load, load_dotenv

__all__ = [
    "BACKENDS",
    "DEFAULT_MODEL",
    "ConfigError",
    "EnvironmentSettingError",
    "RunConfig",
    "load_config",
    "run_config",
]

BACKENDS = BACKEND_NAMES  # the registry's names (runtime/backends/registry.py)
DEFAULT_MODEL = "unspecified"  # the built-in default model: the agent CLI picks its own
MODEL_VARIABLE = "OPENPROSE_DEFAULT_MODEL"
JOBS_VARIABLE = "OPENPROSE_MAX_PARALLEL"
MAX_JOBS = 1024
_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}")


class EnvironmentSettingError(ConfigError):
    """A bad `OPENPROSE_*` value in the process environment (exit 2, like a bad file)."""

    def __init__(self, variable: str, message: str) -> None:
        ValueError.__init__(self, f"environment variable {variable}: {message}")
        self.path = Path(variable)
        self.problems = (ConfigProblem(key=variable, message=message),)


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
    default_model: str = DEFAULT_MODEL
    # setting → the layer it came from: `--jobs`, `/…/ROOT/.env:3`, `environment`,
    # `prose.toml`, `default` (for `jobs` and `default_model`)
    origins: Mapping[str, str] = field(
        default_factory=lambda: {"jobs": "default", "default_model": "default"}
    )

    def overridden(self, *, jobs: int | None = None, default_model: str | None = None) -> RunConfig:
        """The settings with the CLI's flags applied (a flag wins over every other layer)."""
        config, origins = self, dict(self.origins)
        if jobs is not None:
            config, origins["jobs"] = replace(config, jobs=jobs), "--jobs"
        if default_model is not None:
            config = replace(config, default_model=default_model)
            origins["default_model"] = "--model"
        return replace(config, origins=origins)


def load_config(root: Path, env: Mapping[str, str] | None = None) -> RunConfig:
    """Read and check `ROOT/prose.toml` (project_toml.load; a missing file means every
    default), then layer `ROOT/.env` and the environment (`env`, default this process's)
    over it. A bad value is a ConfigError naming its file and line, or its variable."""
    checked = load(root)
    config = RunConfig() if checked is None else run_config(checked.data)
    return layered(config, load_dotenv(root), os.environ if env is None else env)


def layered(config: RunConfig, dotenv: DotEnv, env: Mapping[str, str]) -> RunConfig:
    """`config` (prose.toml's) under the `.env` file's and the environment's settings."""
    origins = dict(config.origins)
    jobs, model = config.jobs, config.default_model
    for variable, setting in ((JOBS_VARIABLE, "jobs"), (MODEL_VARIABLE, "default_model")):
        text, origin = dotenv.get(variable), dotenv.where(variable)
        if text is None and env.get(variable) is not None:
            text, origin = env[variable], "environment"
        if text is None:
            continue
        problem = _setting_problem(setting, text.strip())
        if problem is not None:
            if origin == "environment":
                raise EnvironmentSettingError(variable, problem)
            raise ConfigError(
                dotenv.path,
                [ConfigProblem(key=variable, message=problem, line=dotenv.lines.get(variable))],
            )
        if setting == "jobs":
            jobs = int(text.strip())
        else:
            model = text.strip()
        origins[setting] = origin
    return replace(config, jobs=jobs, default_model=model, origins=origins)


def _setting_problem(setting: str, text: str) -> str | None:
    if setting == "jobs":
        if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_JOBS:
            return f"expected a whole number of renders from 1 to {MAX_JOBS}, not {text!r:.40}"
        return None
    if not _MODEL.fullmatch(text):
        return (
            "expected a model name (letters, digits and `._:/@+-`, at most 200 characters), "
            f"not {text!r:.40}"
        )
    return None


def run_config(data: Mapping[str, Any]) -> RunConfig:
    """The runtime's settings from an already-checked prose.toml document."""
    run = data.get("run", {})
    renders = dict(data.get("render", {}))
    default = renders.pop("default", None)
    origins = {
        "jobs": "prose.toml" if "jobs" in run else "default",
        "default_model": "prose.toml" if "default_model" in run else "default",
    }
    return RunConfig(
        jobs=run.get("jobs", 2),
        timeout=float(run.get("timeout", 600)),
        backend=run.get("backend", "filesystem"),
        render_default=default,
        render_nodes=renders,
        cadence=dict(data.get("cadence", {})),
        judge=data.get("test", {}).get("judge"),
        default_model=run.get("default_model", DEFAULT_MODEL),
        origins=origins,
    )
