"""Pluggable renders: what runs when a node renders, and how a node's render is bound.

A binding is a table with a `kind` and kind-specific keys, taken (first match wins) from
a `--render NODE=KIND:VALUE` CLI flag, prose.toml `[render.<node>]`, the compiled
intent's topology node `render` object, or prose.toml `[render.default]`:

| kind      | keys                                                                          |
|-----------|-------------------------------------------------------------------------------|
| command   | `command` (string, split like a shell does, or list), `env` (table), `pass_env`, `timeout` |
| python    | `callable` = "module:function" (ROOT is importable), `pass_env`, `timeout`    |
| agent     | `command` template ({prompt_file} {node} {output} {workspace}), `stdin`, `model`, `env`, `pass_env`, `timeout` |
| replay    | `dir` (under ROOT): copies `<dir>/<node>/` as the render's output              |
| ingress   | none: publishes the trigger data (`<key>.json` per key of an object, else `data.json`) |

`{node}`, `{run_id}`, `{workspace}`, `{output}` are substituted inside command arguments.
A mount of a contract template (node `runtime-adapter[claude]`) also takes the binding of
its template (`[render.runtime-adapter]`, `--render runtime-adapter=…`) when it has none of
its own; `{node}` and PROSEC_NODE are still the mount's own name.
Every render receives a `RenderRequest`; command-like renders get it as environment
variables (see `command.py`) and files in the workspace. Command, agent and python
renders run as processes (process.py) with a scrubbed environment (environ.py); each
attempt writes its artifact to its own staging folder `runs/{id}/staging/{node}/{attempt}/`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..agents import AgentMemory

__all__ = [
    "Binding",
    "BindingError",
    "RenderOutcome",
    "RenderRequest",
    "Renderer",
    "cost_problem",
    "make_renderer",
    "parse_cli_binding",
    "resolve_binding",
    "template_of",
]

KINDS = ("command", "python", "agent", "replay", "ingress")
_MOUNT = re.compile(r"(?P<template>[^\[\]]+)\[[^\[\]]+\]")


def template_of(node: str) -> str | None:
    """The contract template a node mounts (`runtime-adapter[claude]` → `runtime-adapter`)."""
    match = _MOUNT.fullmatch(node)
    return match.group("template") if match else None


class BindingError(ValueError):
    """A node without a usable render binding (reported before anything runs)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderRequest:
    """Everything a render may use: where to read, where to write, and why it woke.

    A python render's function receives this object; a command or agent render gets the
    same facts as `PROSEC_*` environment variables (named below) and as the files they
    point at. Every path is absolute. Inputs are read only at the versions pinned in
    `inputs_file`, never from `state/`; only `output` and `workspace` are written.

    Attributes:
        run_id: The run's id (`PROSEC_RUN_ID`), e.g. `20260101-090000-abc123`.
        node: The node rendering (`PROSEC_NODE`); a template's mount keeps its own name,
            `runtime-adapter[claude]`.
        root: The OpenProse root, also the working directory (`PROSEC_ROOT`).
        run_dir: `ROOT/runs/{run_id}/` (`PROSEC_RUN_DIR`).
        workspace: `runs/{id}/workspace/{node}/`, the node's private scratch
            (`PROSEC_WORKSPACE`); it holds `__inputs.json`, `__wake.json`,
            `__render.log` (stdout and stderr of a process render) and the signal files
            the render may write: `__error.md` (fail with `# Error: <name>`) and
            `__attest.json`.
        output: `runs/{id}/staging/{node}/{attempt}/`, empty, fresh for each attempt
            (`PROSEC_OUTPUT`): write the artifact to publish here, plain files and
            folders only. Its structured truth is built from `.json`/`.yaml` files (at
            the key path of their relative path) and Markdown frontmatter.
        inputs_file: `workspace/__inputs.json` (`PROSEC_INPUTS`): `inputs` (one entry per
            subscribed producer facet: `producer`, `facet`, `token`, `version`, and
            `path`, a read-only copy of that version under `runs/{id}/world-model/`, or
            null for a producer that never published), `caller` (`name`, `type`, `path`
            of each caller input), `prior` and `wake`.
        wake_file: `workspace/__wake.json` (`PROSEC_WAKE`): `source` (`input`, `self`
            or `external`), `refs` (receipt hashes or the trigger data's token) and, for
            a trigger, `data`: the JSON payload exactly as given.
        attest_file: `workspace/__attest.json` (`PROSEC_ATTEST`), where the render lists
            the render-attested postconditions it vouches for:
            `{"attested": ["pc-…", …]}`.
        prior: The node's own current truth, a read-only folder (`PROSEC_PRIOR`); None
            before its first commit.
        prior_version: That truth's content address (`PROSEC_PRIOR_VERSION`), or None.
        contract: The node's contract source as snapshotted in `runs/{id}/sources/`
            (`PROSEC_CONTRACT`), or None.
        timeout: Seconds the render may take before it is stopped (`timeout`).
        wake: The contents of `wake_file`, already parsed.
        attested: The ids of the node's render-attested postconditions
            (`PROSEC_ATTESTED_IDS`, comma-separated): what `attest_file` must list.
        attempt: Names this attempt's staging folder and process record.
        task: What a VM step asks, in words (`prosec run FILE`: a function call, a
            session prompt or a discretion question; see `runtime/vm/calls.py`), else "".
        memory: The node's agent memory for this session when its `### Runtime` has
            `persist` (`PROSEC_MEMORY_DIR`, `PROSEC_MEMORY` for `memory.md`,
            `PROSEC_MEMORY_SEGMENT` for this session's segment record,
            `PROSEC_MEMORY_SCOPE`), else None.
        model: The model the node's `### Runtime` names, else None: it wins over the
            binding's `model`, which wins over `default_model`.
        default_model: `--model`, `OPENPROSE_DEFAULT_MODEL` (`.env`, then the
            environment), `[run] default_model`, else `unspecified`.
        step: A VM step's name (its workspace folder `workspace/{node}/{step}/`), else
            "" for a node render.
    """

    run_id: str
    node: str
    root: Path
    run_dir: Path
    workspace: Path
    output: Path
    inputs_file: Path
    wake_file: Path
    attest_file: Path
    prior: Path | None
    prior_version: str | None
    contract: Path | None
    timeout: float
    wake: Mapping[str, Any] = field(default_factory=dict)
    attested: tuple[str, ...] = ()
    attempt: str = ""  # names this attempt's staging folder and process record
    task: str = ""  # a VM step's request in words (empty for a node render)
    memory: AgentMemory | None = None
    model: str | None = None
    default_model: str = "unspecified"
    step: str = ""  # a VM step's workspace folder name (empty for a node render)


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderOutcome:
    """How a render ended, as a renderer reports it to the runner (renders themselves
    never build one: a process render ends by its exit status, a python render by
    returning or raising).

    Attributes:
        ok: The render finished; its output is then committed (rendered, or skipped
            when nothing material moved), unless `__error.md`, a postcondition or a
            missing attestation fails it.
        error: The failure's name when not ok, as it lands in the failed receipt's
            `semantic_diff.error`: `timeout`, `exit-N`, `killed-by-SIGKILL`, `spawn`,
            `exception`, `import`, `invalid-cost`, `interrupted`, …
        detail: One line for people (the receipt's `semantic_diff.reason`), e.g.
            `render exited with status 4; see runs/{id}/workspace/{node}/__render.log`.
        cost: What the render spent, for the receipt's `cost`: `model`, `provider` and
            `tokens` (`fresh`, `reused`); a python render's return value (see
            `cost_problem`), an agent render's `model`.
    """

    ok: bool
    error: str | None = None
    detail: str = ""
    cost: Mapping[str, Any] | None = None


def cost_problem(cost: Any) -> str | None:
    """Why a render's cost cannot go on a receipt (None when it can, or is absent): a
    mapping whose `model` / `provider` are short strings and whose `tokens` `fresh` /
    `reused` are non-negative whole numbers."""
    if cost is None:
        return None
    if not isinstance(cost, Mapping):
        return f"the cost must be a mapping, not {type(cost).__name__}"
    for key in ("model", "provider"):
        value = cost.get(key)
        if value is not None and not (isinstance(value, str) and len(value) <= 200):
            return f"cost `{key}` must be a string of at most 200 characters"
    tokens = cost.get("tokens")
    if tokens is None:
        return None
    if not isinstance(tokens, Mapping):
        return "cost `tokens` must be a mapping"
    for key in ("fresh", "reused"):
        value = tokens.get(key, 0)
        whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        if isinstance(value, bool) or not whole or not 0 <= value < 2**53:
            return f"cost `tokens.{key}` must be a whole number of tokens, not {value!r:.40}"
    return None


class Renderer(Protocol):
    """A render implementation; must be safe to call from worker threads."""

    def render(self, request: RenderRequest) -> RenderOutcome: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Binding:
    """A resolved render binding and where it came from (for messages)."""

    kind: str
    options: Mapping[str, Any]
    origin: str


def parse_cli_binding(text: str) -> tuple[str, dict[str, Any]]:
    """Parse `NODE=KIND:VALUE` (NODE `*` = default) into (node, binding table)."""
    node, sep, rest = text.partition("=")
    if not sep or not node:
        raise BindingError(f"--render {text!r}: expected NODE=KIND:VALUE")
    kind, _, value = rest.partition(":")
    if kind not in KINDS:
        raise BindingError(f"--render {text!r}: kind must be one of {', '.join(KINDS)}")
    key = {"command": "command", "agent": "command", "python": "callable", "replay": "dir"}
    table: dict[str, Any] = {"kind": kind}
    if kind in key:
        if not value:
            raise BindingError(f"--render {text!r}: {kind} needs a value after ':'")
        table[key[kind]] = value
    return node, table


def resolve_binding(
    node: str,
    *,
    cli: Mapping[str, Mapping[str, Any]],
    config_nodes: Mapping[str, Mapping[str, Any]],
    intent_render: Mapping[str, Any] | None,
    config_default: Mapping[str, Any] | None,
) -> Binding:
    """Pick the node's binding by precedence; raise BindingError naming how to bind one.

    A template's mount falls back on its template's binding before the intent's own."""
    candidates: list[tuple[Mapping[str, Any] | None, str]] = [
        (cli.get(node), f"--render {node}=…"),
        (config_nodes.get(node), f"prose.toml [render.{node}]"),
    ]
    template = template_of(node)
    if template is not None:
        candidates += [
            (cli.get(template), f"--render {template}=…"),
            (config_nodes.get(template), f"prose.toml [render.{template}]"),
        ]
    candidates += [
        (intent_render, f"compiled intent node {node!r} render"),
        (cli.get("*"), "--render *=…"),
        (config_default, "prose.toml [render.default]"),
    ]
    for table, origin in candidates:
        if table is None:
            continue
        kind = table.get("kind", "command")
        if kind not in KINDS:
            raise BindingError(f"{origin}: kind {kind!r} is not one of {', '.join(KINDS)}")
        return Binding(kind=kind, options=dict(table), origin=origin)
    table_name = template or node  # a template's table binds every one of its mounts
    raise BindingError(
        f"node {node!r} has no render bound: add a [render.{table_name}] table (or "
        "[render.default]) to prose.toml, e.g.\n"
        f'  [render.{table_name}]\n  kind = "command"\n'
        f'  command = "python3 renders/{table_name}.py"\n'
        f"or pass --render '{table_name}=command:python3 renders/{table_name}.py'"
    )


def make_renderer(binding: Binding, root: Path) -> Renderer:
    """Build the renderer for a binding; configuration errors raise BindingError."""
    from . import agent, command, ingress, python, replay

    factories: dict[str, Any] = {
        "command": command.CommandRenderer.from_binding,
        "python": python.PythonRenderer.from_binding,
        "agent": agent.AgentRenderer.from_binding,
        "replay": replay.ReplayRenderer.from_binding,
        "ingress": ingress.IngressRenderer.from_binding,
    }
    renderer: Renderer = factories[binding.kind](binding, root)
    return renderer
