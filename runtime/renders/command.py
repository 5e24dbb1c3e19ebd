"""Shell-command renders: run a program with the node's context in env vars and files.

Environment given to the process (all paths absolute):

| variable               | meaning                                                        |
|------------------------|----------------------------------------------------------------|
| PROSEC_RUN_ID          | the run id                                                     |
| PROSEC_NODE            | the node being rendered                                        |
| PROSEC_ROOT            | the OpenProse root (also the working directory)               |
| PROSEC_RUN_DIR         | runs/{id}/                                                     |
| PROSEC_WORKSPACE       | runs/{id}/workspace/{node}/ — private scratch                  |
| PROSEC_OUTPUT          | this attempt's staging folder: write the artifact here         |
| PROSEC_INPUTS          | JSON file: pinned input versions and their paths (+ caller)    |
| PROSEC_WAKE            | JSON file: the wake (source, refs, trigger data)               |
| PROSEC_PRIOR           | the node's prior truth directory ("" before its first commit) |
| PROSEC_PRIOR_VERSION   | its ContentAddress ("" before its first commit)               |
| PROSEC_CONTRACT        | the node's contract source snapshot ("" if unknown)            |
| PROSEC_ATTEST          | where to write {"attested": [ids]} for render-attested checks |
| PROSEC_ATTESTED_IDS    | the ids the validator expects attested, comma-separated        |
| PROSEC_MODEL           | the model: `### Runtime` model, binding `model`, default model |
| PROSEC_MEMORY_DIR      | the agent's memory folder (`### Runtime` persist; else "")      |
| PROSEC_MEMORY          | its memory.md ("" without persist)                             |
| PROSEC_MEMORY_SEGMENT  | this session's segment record {name}-NNN.md ("" without)       |
| PROSEC_MEMORY_SCOPE    | true, project, user or path ("" without persist)               |

Nothing else of the runner's environment reaches the render but the allow-list of
environ.py and the binding's `pass_env` names; the binding's `env` table adds literal
values.

To signal a semantic failure, write `$PROSEC_WORKSPACE/__error.md` starting with
`# Error: <name>`. A non-zero exit, a signal or a timeout fails the render too. stdout
and stderr go to `$PROSEC_WORKSPACE/__render.log` (its last 4 MiB are kept). The process
runs in its own process group, recorded in the run directory (process.py).
"""

from __future__ import annotations

import math
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import Binding, BindingError, RenderOutcome, RenderRequest
from .environ import pass_env_of, scrubbed
from .process import LOG_FILE, run_render_process

__all__ = ["LOG_FILE", "CommandRenderer", "render_env", "run_render_process"]


def render_env(
    request: RenderRequest,
    extra: Mapping[str, str] | None = None,
    pass_env: Sequence[str] = (),
    *,
    model: str | None = None,
) -> dict[str, str]:
    """The environment of a render process (see environ.py); `model` is the one the
    render resolved (an agent's binding may name one), else the request's."""
    memory = request.memory
    env = scrubbed(os.environ, pass_env)
    env.update(extra or {})
    env.update(
        {
            "PROSEC_RUN_ID": request.run_id,
            "PROSEC_NODE": request.node,
            "PROSEC_ROOT": str(request.root),
            "PROSEC_RUN_DIR": str(request.run_dir),
            "PROSEC_WORKSPACE": str(request.workspace),
            "PROSEC_OUTPUT": str(request.output),
            "PROSEC_INPUTS": str(request.inputs_file),
            "PROSEC_WAKE": str(request.wake_file),
            "PROSEC_PRIOR": str(request.prior) if request.prior else "",
            "PROSEC_PRIOR_VERSION": request.prior_version or "",
            "PROSEC_CONTRACT": str(request.contract) if request.contract else "",
            "PROSEC_ATTEST": str(request.attest_file),
            "PROSEC_ATTESTED_IDS": ",".join(request.attested),
            "PROSEC_MODEL": model or request.model or request.default_model,
            "PROSEC_MEMORY_DIR": str(memory.directory) if memory else "",
            "PROSEC_MEMORY": str(memory.memory) if memory else "",
            "PROSEC_MEMORY_SEGMENT": str(memory.segment) if memory else "",
            "PROSEC_MEMORY_SCOPE": memory.scope if memory else "",
        }
    )
    return env


def substitute(argv: Sequence[str], request: RenderRequest) -> list[str]:
    """Fill `{node}`, `{run_id}`, `{workspace}`, `{output}` inside each argument."""
    values = {
        "{node}": request.node,
        "{run_id}": request.run_id,
        "{workspace}": str(request.workspace),
        "{output}": str(request.output),
    }
    out = []
    for arg in argv:
        for key, value in values.items():
            arg = arg.replace(key, value)
        out.append(arg)
    return out


def split_command(value: object, origin: str) -> list[str]:
    """A `command` setting as argv: a string is split like a shell, a list is taken as is."""
    if isinstance(value, str) and value.strip():
        return shlex.split(value)
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return list(value)
    raise BindingError(f"{origin}: `command` must be a non-empty string or list of strings")


def timeout_of(binding: Binding) -> float | None:
    """The binding's `timeout`: a positive, finite number of seconds (nan, inf refused)."""
    value = binding.options.get("timeout")
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise BindingError(
            f"{binding.origin}: `timeout` must be a positive, finite number of seconds"
        )
    return float(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandRenderer:
    """Runs `command` with the render context in its environment."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    pass_env: tuple[str, ...] = ()
    timeout: float | None = None

    @classmethod
    def from_binding(cls, binding: Binding, root: Path) -> CommandRenderer:
        env = binding.options.get("env", {})
        if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            raise BindingError(f"{binding.origin}: `env` must be a table of strings")
        argv = split_command(binding.options.get("command"), binding.origin)
        return cls(
            argv=tuple(argv),
            env=dict(env),
            pass_env=pass_env_of(binding),
            timeout=timeout_of(binding),
        )

    def render(self, request: RenderRequest) -> RenderOutcome:
        timeout = self.timeout or request.timeout
        env = render_env(request, self.env, self.pass_env)
        return run_render_process(substitute(self.argv, request), request, env, timeout)
