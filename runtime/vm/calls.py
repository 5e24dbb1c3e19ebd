"""How the VM reaches a render: one `call`, `session` or discretion question.

Every step the VM cannot decide itself goes through the render bound to its target (the
function called, the agent of a session, or, for a question, the running function),
resolved as a node's render is (`--render`, prose.toml `[render.<name>]`,
`[render.default]`). The render gets the usual `RenderRequest`: its workspace
`runs/{id}/workspace/{target}/{step}/` holds `__inputs.json`, whose `call` entry says
what is asked (`kind`: call | session | resume | question, `target`, `args`, `prompt`,
`question` with its `options`), and `request.task` says the same in words for an agent.
It answers in its output folder:

- a call: one file per declared return, `{name}.json` (a JSON value) or `{name}.md`
  (text); without declared returns, `result.json` / `result.md`;
- a session: `result.md` (text) or `result.json`;
- a question: `answer.json` holding `{"answer": true|false}` (a condition) or the label
  of the option chosen (a `choice`); `answer.md` with `yes`/`no` or the label also works.

`workspace/.../__error.md` (`# Error: <name>`) or a failed process fails the step.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..agents import AgentMemory, MemoryUnavailable, open_memory, rotate, segment_name
from ..canonical import canonical_json
from ..fsio import atomic_write_bytes, read_tree
from ..renders import Binding, BindingError, Renderer, RenderRequest, make_renderer, resolve_binding
from ..userjson import JSONInputError, loads
from .memory import memory_runtime

__all__ = ["Ask", "Invoker", "StepFailed"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class StepFailed(Exception):
    """A render could not do the step: `error` names it, `detail` says why."""

    def __init__(self, error: str, detail: str) -> None:
        super().__init__(f"{error}: {detail}")
        self.error = error
        self.detail = detail


@dataclass(frozen=True, slots=True, kw_only=True)
class Ask:
    """One step for a render."""

    kind: str  # call | session | resume | question
    target: str  # whose render answers
    key: str  # the step's journal key
    args: Mapping[str, Any]
    prompt: str = ""
    question: str = ""
    options: tuple[str, ...] = ()
    returns: tuple[str, ...] = ()
    contract: str | None = None  # the source snapshot, relative to the run's sources/
    persist: str | None = None  # a session's agent `persist:` (true | project | user | a folder)
    model: str | None = None  # a session's agent `model:`


@dataclass(slots=True, kw_only=True)
class Invoker:
    """Resolves renders by target and runs steps through them, `jobs` at a time."""

    root: Path
    run_dir: Path
    run_id: str
    bind: Callable[[str], Binding]
    timeout: float
    jobs: int
    memory_root: Path | None = None  # the top run's folder (`persist: true` memory)
    ephemeral: bool = False
    default_model: str = "unspecified"
    # told of each persistent agent's session when it ends (the seed 004 agent rows)
    remember: Callable[[AgentMemory, str], None] | None = None
    _renderers: dict[str, Renderer] | None = None
    _gate: threading.Semaphore | None = None
    _lock: threading.Lock | None = None

    def __post_init__(self) -> None:
        self._renderers = {}
        self._gate = threading.Semaphore(self.jobs)
        self._lock = threading.Lock()

    def renderer(self, target: str) -> Renderer:
        assert self._renderers is not None and self._lock is not None
        with self._lock:
            if target not in self._renderers:
                try:
                    self._renderers[target] = make_renderer(self.bind(target), self.root)
                except BindingError as exc:
                    raise StepFailed("unbound", str(exc)) from None
            return self._renderers[target]

    def run(self, ask: Ask) -> Any:
        renderer = self.renderer(ask.target)
        step = _UNSAFE.sub("-", ask.key).strip("-") or "step"
        workspace = self.run_dir / "workspace" / ask.target / step
        workspace.mkdir(parents=True, exist_ok=True)
        error_file = workspace / "__error.md"
        error_file.unlink(missing_ok=True)
        attempt = f"{step}.{secrets.token_hex(3)}"
        output = self.run_dir / "staging" / ask.target / attempt
        output.mkdir(parents=True, exist_ok=True)
        call = {
            "kind": ask.kind,
            "target": ask.target,
            "key": ask.key,
            "args": dict(ask.args),
            "prompt": ask.prompt,
            "question": ask.question,
            "options": list(ask.options),
            "returns": list(ask.returns),
        }
        inputs_file = workspace / "__inputs.json"
        document: dict[str, Any] = {
            "inputs": [],
            "caller": [],
            "prior": None,
            "wake": {},
            "call": call,
        }
        atomic_write_bytes(inputs_file, json.dumps(document, indent=2).encode() + b"\n")
        wake_file = workspace / "__wake.json"
        atomic_write_bytes(wake_file, b'{"refs": [], "source": "input"}\n')
        contract = self.run_dir / "sources" / ask.contract if ask.contract else None
        memory = None
        if ask.persist is not None:
            try:
                memory = open_memory(
                    memory_runtime(ask.persist),
                    ask.target,
                    root=self.root,
                    run_dir=self.memory_root or self.run_dir,
                    ephemeral=self.ephemeral,
                )
            except MemoryUnavailable as exc:
                raise StepFailed("memory-unavailable", str(exc)) from None
            if memory is not None:
                memory = claim_segment(self.memory_root or self.run_dir, ask.key, memory)
        request = RenderRequest(
            run_id=self.run_id,
            node=ask.target,
            root=self.root,
            run_dir=self.run_dir,
            workspace=workspace,
            output=output,
            inputs_file=inputs_file,
            wake_file=wake_file,
            attest_file=workspace / "__attest.json",
            prior=None,
            prior_version=None,
            contract=contract if contract is not None and contract.is_file() else None,
            timeout=self.timeout,
            wake={"source": "input", "refs": []},
            attempt=attempt,
            task=_task(ask, output),
            memory=memory,
            model=ask.model,
            default_model=self.default_model,
            step=step,
        )
        assert self._gate is not None
        with self._gate:
            outcome = renderer.render(request)
        if memory is not None:  # the session's segment is closed, whatever its outcome
            rotate(
                memory,
                run_id=self.run_id,
                node=ask.target,
                outcome="ok" if outcome.ok else "failed",
            )
            if self.remember is not None:
                self.remember(memory, ask.prompt)
        if error_file.is_file():
            text = error_file.read_text(encoding="utf-8", errors="replace")
            first = text.strip().splitlines()[0] if text.strip() else ""
            name = first.removeprefix("# Error:").strip() if first.startswith("# Error:") else ""
            raise StepFailed(
                name or "error", f"{ask.target} wrote {error_file.relative_to(self.run_dir)}"
            )
        if not outcome.ok:
            raise StepFailed(outcome.error or "failed", outcome.detail)
        return _read_answer(ask, read_tree(output))


SEGMENTS = Path("vm") / "segments.json"
_CLAIMING = threading.Lock()


def claim_segment(run_dir: Path, key: str, memory: AgentMemory) -> AgentMemory:
    """The segment number of the session that is step `key`, claimed in the top run's
    `vm/segments.json` (step key → agent, folder, number) before the session starts.
    The step run again (a resume after a cut or a lost store write, before the step was
    journaled) gets the number it had, not the next unused one; a session of the same
    agent in flight at once (parallel branches) gets the next number past every claim."""
    path = run_dir / SEGMENTS
    with _CLAIMING:
        claims: dict[str, Any] = {}
        if path.is_file():
            found = loads(path.read_bytes(), source=str(path))
            claims = found if isinstance(found, dict) else {}
        folder = str(memory.directory)
        mine = claims.get(key)
        if isinstance(mine, dict) and mine.get("agent") == memory.name:
            number = int(mine["number"])
        else:
            taken = [
                int(c["number"])
                for c in claims.values()
                if isinstance(c, dict)
                and c.get("agent") == memory.name
                and c.get("folder") == folder
            ]
            number = max(memory.number, max(taken, default=0) + 1)
            claims[key] = {"agent": memory.name, "folder": folder, "number": number}
            atomic_write_bytes(path, canonical_json(claims) + b"\n")
    segment = memory.directory / segment_name(memory.name, number)
    return replace(memory, number=number, segment=segment)


def _task(ask: Ask, output: Path) -> str:
    args = json.dumps(dict(ask.args), indent=2, ensure_ascii=False, sort_keys=True)
    if ask.kind == "question":
        if ask.options:
            choices = ", ".join(json.dumps(o) for o in ask.options)
            return (
                f"Decide: {ask.question}\nChoose one of: {choices}.\n"
                f'Write {output}/answer.json as {{"answer": "<the option>"}}.\n'
            )
        return (
            f"Decide whether this holds: {ask.question}\n"
            f'Write {output}/answer.json as {{"answer": true}} or {{"answer": false}}.\n'
        )
    if ask.kind in ("session", "resume"):
        return f"{ask.prompt}\n\nContext:\n{args}\n\nWrite your answer to {output}/result.md.\n"
    names = ", ".join(ask.returns) or "result"
    return (
        f"Call `{ask.target}` with these arguments:\n{args}\n\n"
        f"Write each return ({names}) to {output}/<name>.json (JSON) or <name>.md (text).\n"
    )


def _value(files: Mapping[str, bytes], name: str) -> tuple[bool, Any]:
    if f"{name}.json" in files:
        try:
            return True, loads(files[f"{name}.json"], source=f"{name}.json")
        except JSONInputError as exc:
            raise StepFailed("bad-output", f"{name}.json is not JSON: {exc}") from None
    for suffix in (".md", ".txt"):
        if f"{name}{suffix}" in files:
            return True, files[f"{name}{suffix}"].decode("utf-8", "replace").strip()
    return False, None


def _read_answer(ask: Ask, files: Mapping[str, bytes]) -> Any:
    if ask.kind == "question":
        found, answer = _value(files, "answer")
        if isinstance(answer, dict):
            answer = answer.get("answer")
        if not found:
            raise StepFailed("no-answer", f"{ask.target} wrote no answer.json")
        if ask.options:
            if answer not in ask.options:
                raise StepFailed("bad-answer", f"{answer!r} is not one of {list(ask.options)}")
            return answer
        if isinstance(answer, str):
            answer = answer.strip().lower() in ("yes", "true")
        return bool(answer)
    if ask.kind == "call" and ask.returns:
        values = {}
        for name in ask.returns:
            found, value = _value(files, name)
            if not found:
                raise StepFailed("missing-return", f"{ask.target} returned no `{name}`")
            values[name] = value
        return values[ask.returns[0]] if len(ask.returns) == 1 else values
    found, value = _value(files, "result")
    if found:
        return value
    return {k: v.decode("utf-8", "replace") for k, v in sorted(files.items())}


def bind_for(
    cli: Mapping[str, Mapping[str, Any]],
    config_nodes: Mapping[str, Mapping[str, Any]],
    config_default: Mapping[str, Any] | None,
) -> Callable[[str], Binding]:
    def bind(target: str) -> Binding:
        return resolve_binding(
            target,
            cli=cli,
            config_nodes=config_nodes,
            intent_render=None,
            config_default=config_default,
        )

    return bind


__all__ += ["bind_for"]
