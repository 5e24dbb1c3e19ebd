"""Agent renders: build a prompt from the contract, pinned inputs and output location,
then run the configured agent command (prompt on stdin, or as `{prompt_file}`).

Keys: `command` (template; placeholders {prompt_file} {node} {output} {workspace}
{run_id}), `stdin` (bool, default true when the template has no {prompt_file}),
`model` (recorded in the receipt's cost; a node's `### Runtime` model wins over it, and
it wins over the default model), `env`, `pass_env`, `timeout`. A node with `persist`
gets its memory paths in the prompt and as `PROSEC_MEMORY*` variables. The prompt is
written to `workspace/{node}/__prompt.md` for inspection (and read from there as stdin).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..fsio import atomic_write_bytes
from . import Binding, BindingError, RenderOutcome, RenderRequest
from .command import render_env, split_command, substitute, timeout_of
from .environ import pass_env_of
from .process import run_render_process

__all__ = ["AgentRenderer", "build_prompt"]

PROMPT_FILE = "__prompt.md"


def build_prompt(request: RenderRequest) -> str:
    """The agent's instructions: contract, pinned inputs by reference, where to write."""
    inputs = json.loads(request.inputs_file.read_bytes())
    contract = request.contract.read_text(encoding="utf-8") if request.contract else ""
    lines = [
        f"# Render `{request.node}` (run {request.run_id})",
        "",
        "You are rendering one node of an OpenProse program. Keep its `### Maintains`",
        "true and write the published artifact, nothing else, under the output folder.",
        "",
        "## Contract",
        "",
        contract.strip() or "(no contract source was snapshotted for this node)",
        "",
        "## Inputs (read them at these pinned versions; never elsewhere)",
        "",
    ]
    for item in inputs.get("inputs", []):
        where = item.get("path") or "(never committed: no truth yet)"
        lines.append(f"- `{item['producer']}` facet `{item['facet']}` @ {item['version']}: {where}")
    for item in inputs.get("caller", []):
        lines.append(f"- caller input `{item['name']}`: {item['path']}")
    if not inputs.get("inputs") and not inputs.get("caller"):
        lines.append("- (none)")
    lines += [
        "",
        "## Your prior truth",
        "",
        f"- {request.prior} ({request.prior_version})" if request.prior else "- (none yet)",
        "",
        "## Output",
        "",
        f"- Write the published artifact (structured JSON/YAML or Markdown with YAML "
        f"frontmatter) under: {request.output}",
        f"- Scratch notes go in: {request.workspace}",
        f"- If you cannot keep the contract, write {request.workspace / '__error.md'} "
        "starting with `# Error: <short-name>` and publish nothing.",
    ]
    delegation = inputs.get("delegation")
    if isinstance(delegation, dict):
        lines += [
            "",
            "## Delegation request",
            "",
            f"You run as the delegate `{request.node}` of `{delegation.get('from')}`. The "
            f"request is at: {delegation.get('request')}",
            "Write your answer (one file is best) under the output folder above.",
        ]
    responses = sorted((request.workspace / "__delegate").glob("*/*-response.md"))
    if responses:
        lines += ["", "## Delegation responses", ""]
        for response in responses:
            call = response.name.removesuffix("-response.md")
            lines += [
                f"Delegation complete: {response.parent.name}/{call}",
                f"Response: {response}",
            ]
    if request.memory is not None:
        memory = request.memory
        lines += [
            "",
            "## Your memory",
            "",
            f"Your memory is at: {memory.memory}",
            "Read it first to understand your prior context (earlier segment records are "
            f"beside it in {memory.directory}). When done, update it with your compacted "
            "state.",
            f"Also write your segment record for this session to: {memory.segment}",
        ]
    if request.attested:
        lines += [
            f"- Attest these postconditions by id in {request.attest_file} as "
            '{"attested": [ids]} only if they hold: ' + ", ".join(request.attested)
        ]
    if request.task:
        lines += ["", "## Task", "", request.task.rstrip()]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentRenderer:
    """Runs an agent CLI on a generated prompt."""

    argv: tuple[str, ...]
    stdin: bool
    model: str | None  # the binding's; a `### Runtime` model wins, the default loses
    env: Mapping[str, str] = field(default_factory=dict)
    pass_env: tuple[str, ...] = ()
    timeout: float | None = None

    @classmethod
    def from_binding(cls, binding: Binding, root: Path) -> AgentRenderer:
        argv = split_command(binding.options.get("command"), binding.origin)
        uses_file = any("{prompt_file}" in arg for arg in argv)
        stdin = binding.options.get("stdin", not uses_file)
        model = binding.options.get("model")
        env = binding.options.get("env", {})
        if (
            not isinstance(stdin, bool)
            or not isinstance(model, str | None)
            or not isinstance(env, dict)
        ):
            raise BindingError(f"{binding.origin}: `stdin` bool, `model` string, `env` table")
        return cls(
            argv=tuple(argv),
            stdin=stdin,
            model=model,
            env=env,
            pass_env=pass_env_of(binding),
            timeout=timeout_of(binding),
        )

    def model_for(self, request: RenderRequest) -> str:
        """`### Runtime` model, else the binding's `model`, else the default model."""
        return request.model or self.model or request.default_model

    def render(self, request: RenderRequest) -> RenderOutcome:
        model = self.model_for(request)
        prompt = build_prompt(request)
        prompt_file = request.workspace / PROMPT_FILE
        # replaced, never written through: a render may have left a symlink here
        atomic_write_bytes(prompt_file, prompt.encode("utf-8"), durable=False)
        argv = [arg.replace("{prompt_file}", str(prompt_file)) for arg in self.argv]
        outcome = run_render_process(
            substitute(argv, request),
            request,
            render_env(request, self.env, self.pass_env, model=model),
            self.timeout or request.timeout,
            stdin=prompt_file if self.stdin else None,
        )
        cost = {"model": model, "provider": "agent"}
        return RenderOutcome(ok=outcome.ok, error=outcome.error, detail=outcome.detail, cost=cost)
