"""Run one test plan: its own root (dist/, runs/, state/ under the output folder), the
fixture nodes woken with their data, the subject rendered as the project binds it, then
(with `### Changes`) a second run with the changed fixtures; evaluate, report, log.

The project's own `state/` and `runs/` are never read or written: the test's root is a
folder of its own, and only the subject's render runs with the project as its working
directory (so `python3 renders/desk.py` finds its script)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..backends import open_backend
from ..canonical import canonical_json, decode_frame, token
from ..config import RunConfig
from ..executor import EngineOptions, RunSummary
from ..fsio import atomic_write_bytes
from ..intent import parse_intent
from ..protocol import QueuedWake, WakeSource
from ..renders import (
    BindingError,
    Renderer,
    RenderOutcome,
    RenderRequest,
    make_renderer,
    resolve_binding,
)
from ..renders.ingress import IngressRenderer
from ..runs import RunDir
from ..serve import reconcile
from ..session import Project, SessionError
from ..truth import TruthError, build_truth
from .checks import MISSING, Observation, Outcome, evaluate, shown
from .judge import JUDGEMENTS, Judge, Judgements, judge_key
from .report import write_reports

__all__ = ["Assertion", "TestResult", "run_function_test", "run_test"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Assertion:
    index: int
    text: str
    negated: bool  # the check's sense was flipped
    negative: bool  # written under `### Expects Not`
    op: str
    ok: bool
    observed: str
    decided_by: str

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(slots=True, kw_only=True)
class TestResult:
    """One test's outcome: `pass`, `fail` (an assertion failed) or `error` (it could not
    run: the subject's render failed, no judge for a judged assertion, …)."""

    name: str
    path: str
    subject: str
    status: str = "error"
    assertions: list[Assertion] = field(default_factory=list)
    error: str = ""
    run: str = ""  # the run folder holding report.md
    seconds: float = 0.0

    @property
    def passed(self) -> int:
        return sum(a.ok for a in self.assertions)

    @property
    def total(self) -> int:
        return len(self.assertions)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "subject": self.subject,
            "status": self.status,
            "passed": self.passed,
            "total": self.total,
            "assertions": [a.to_json() for a in self.assertions],
            "error": self.error,
            "run": self.run,
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True, slots=True)
class _Rooted:
    """A render run with the project as its root (working directory, PROSEC_ROOT)."""

    inner: Renderer
    root: Path

    def render(self, request: RenderRequest) -> RenderOutcome:
        return self.inner.render(dataclasses.replace(request, root=self.root))


@dataclass(frozen=True, slots=True)
class _Fixture:
    """Publishes a fixture (the wake's data): `<key>.json` per key, so every key of the
    fixture is a key of the truth (a facet family's `level:mill` too, which the ingress
    render would fold into `data`)."""

    def render(self, request: RenderRequest) -> RenderOutcome:
        wake = json.loads(request.wake_file.read_bytes())
        data = wake.get("data")
        if not isinstance(data, dict):
            return IngressRenderer().render(request)
        for key, value in data.items():
            name = str(key)
            if not name or "/" in name or "\\" in name or name.startswith("."):
                return RenderOutcome(
                    ok=False, error="fixture", detail=f"fixture key {name!r} is no file name"
                )
            (request.output / f"{name}.json").write_bytes(canonical_json(value))
        return RenderOutcome(ok=True, cost={"model": "none", "provider": "fixture"})


def run_test(
    plan: Mapping[str, Any],
    *,
    project_root: Path,
    config: RunConfig,
    out: Path,
    judge: Judge | None,
    replay: Judgements | None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
) -> TestResult:
    """Run one plan in `out` (emptied first) and return its result; never raises for a
    failing subject (the result says `error`)."""
    import time

    started = time.monotonic()
    result = TestResult(name=plan["name"], path=plan["path"], subject=plan["subject"])
    try:
        _run(plan, result, project_root, config, out, judge, replay, timeout, env)
    except (SessionError, BindingError, OSError, ValueError) as exc:
        result.status, result.error = "error", str(exc)
    result.seconds = time.monotonic() - started
    return result


def _run(
    plan: Mapping[str, Any],
    result: TestResult,
    project_root: Path,
    config: RunConfig,
    out: Path,
    judge: Judge | None,
    replay: Judgements | None,
    timeout: float | None,
    env: Mapping[str, str] | None,
) -> None:
    if out.exists():
        shutil.rmtree(out)
    (out / "dist").mkdir(parents=True)
    intent_doc = plan["intent"]
    atomic_write_bytes(out / "dist" / "manifest.active.json", canonical_json(intent_doc) + b"\n")
    intent = parse_intent(intent_doc, str(out / "dist" / "manifest.active.json"))
    subject = plan["subject"]
    # the subject renders as the project binds it; the fixtures publish their data
    settings = dataclasses.replace(config, backend="filesystem")
    project = Project(
        root=out.resolve(),
        config=settings,
        intent=intent,
        backend=open_backend("filesystem", out.resolve(), env),
    )
    for node in intent.nodes:
        if node == subject:
            binding = resolve_binding(
                node,
                cli={},
                config_nodes=config.render_nodes,
                intent_render=intent.nodes[node].render,
                config_default=config.render_default,
            )
            project.renderers[node] = _Rooted(make_renderer(binding, project_root), project_root)
            project.providers[node] = binding.kind
        else:
            project.renderers[node] = _Fixture()
            project.providers[node] = "ingress"
    options = EngineOptions(jobs=1, timeout=timeout or config.timeout)
    fixtures: dict[str, Any] = plan["fixtures"]
    wakes = [_wake(node, data) for node, data in sorted(fixtures.items())]
    run, summary = _reconcile(project, "run", wakes, True, plan["caller"], options)
    changes = plan.get("changes")
    if changes is not None:
        moved = [
            _wake(node, data)
            for node, data in sorted(changes.items())
            if fixtures.get(node) != data
        ]
        caller = plan.get("changed_caller") or {}
        run, summary = _reconcile(
            project, "trigger", moved, bool(caller), {**plan["caller"], **caller}, options
        )
    result.run = str(run.path)
    seen = _observe(project, run, summary, subject)
    failed = next((f for f in summary.failed if f[0] == subject), None)
    _judge_all(plan, seen, result, judge, replay, run)
    undecided = [a for a in result.assertions if a.decided_by == "error"]
    # a test that expects the subject to fail (`__error.md` exists) checks the failure
    checks_error = any(not a.negated and a.op == "error_file" for a in result.assertions)
    if failed is not None and not checks_error:
        result.status, result.error = "error", f"{subject} failed: {failed[1]}: {failed[2]}"
    elif undecided:
        result.status, result.error = "error", undecided[0].observed
    else:
        result.status = "pass" if all(a.ok for a in result.assertions) else "fail"
    write_reports(run, result.to_json())


def _wake(node: str, data: Any) -> QueuedWake:
    return {"node": node, "source": WakeSource.EXTERNAL, "refs": [token(data)], "data": data}


def _reconcile(
    project: Project,
    kind: str,
    wakes: list[QueuedWake],
    all_nodes: bool,
    inputs: Mapping[str, str],
    options: EngineOptions,
) -> tuple[RunDir, RunSummary]:
    if not project.backend.try_lock():
        raise SessionError(f"{project.root}: another runner holds this test's state lock")
    try:
        return reconcile(
            project, kind=kind, wakes=wakes, all_nodes=all_nodes, inputs=inputs, options=options
        )
    finally:
        project.backend.unlock()


def _observe(project: Project, run: RunDir, summary: RunSummary, subject: str) -> Observation:
    truth: Any = MISSING
    version = project.backend.published_version(subject)
    if version is not None:
        frame = decode_frame(project.backend.get_version(subject, version))
        try:
            truth = build_truth(frame).value
        except TruthError as exc:
            raise ValueError(f"{subject}'s published truth cannot be read: {exc}") from exc
    files: dict[str, str] = {}
    workspace = run.workspace(subject)
    error = workspace / "__error.md"
    if error.is_file():
        files["__error.md"] = error.read_text(encoding="utf-8", errors="replace")
    return Observation(
        truth=truth,
        validator=project.intent.nodes[subject].validator,
        rendered=frozenset(summary.rendered),
        files=files,
    )


def _decide(
    check: Mapping[str, Any],
    seen: Observation,
    judge: Judge | None,
    replay: Judgements | None,
    judgements: Judgements,
    subject: str,
) -> Outcome:
    if check["op"] != "judge":
        return evaluate(check, seen)
    key = judge_key(check, seen.truth)
    if replay is not None:
        record = replay.find(key)
        if record is None:
            return Outcome(
                ok=False,
                observed="no recorded verdict for this assertion over this truth "
                "(--judge-replay reads the last judged run's judgements.json)",
                decided_by="error",
            )
        outcome = Outcome(
            ok=record["verdict"] == "pass",
            observed=str(record.get("evidence", "")),
            decided_by="judge",
            evidence=str(record.get("evidence", "")),
        )
    elif judge is None:
        return Outcome(
            ok=False,
            observed="no check lowers this text and no judge is configured "
            "([test.judge] in prose.toml)",
            decided_by="error",
        )
    else:
        outcome = judge.decide(check, seen.truth, subject)
    if outcome.decided_by == "judge":
        judgements.records.append(
            {
                "key": key,
                "assertion": check["text"],
                "negated": check["negated"],
                "truth": None if seen.truth is MISSING else json.loads(json.dumps(seen.truth)),
                "verdict": "pass" if outcome.ok else "fail",
                "evidence": outcome.evidence,
                "model": "replay" if replay is not None else (judge.model if judge else ""),
            }
        )
    return outcome


__all__ += ["shown"]


def run_function_test(
    plan: Mapping[str, Any],
    *,
    project_root: Path,
    config: RunConfig,
    out: Path,
    judge: Judge | None,
    replay: Judgements | None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
) -> TestResult:
    """Run a test whose subject is a function: its fixtures are the function's parameters,
    it runs in the VM (as `prosec run FILE` runs it) with its runs in `out`, and the
    checks read what it returned."""
    import time

    from ..vm import VmError, VmSettings, missing_inputs, start_vm, unknown_inputs

    started = time.monotonic()
    result = TestResult(name=plan["name"], path=plan["path"], subject=plan["subject"])
    raw = plan["intent"]
    caller: dict[str, str] = dict(plan["caller"])
    try:
        unknown = unknown_inputs(raw, caller)
        missing = missing_inputs(raw, caller)
        if unknown or missing:
            which = unknown[0] if unknown else missing[0][0]
            what = "binds no parameter" if unknown else "is a parameter no fixture binds"
            raise VmError(f"`{which}` {what} of `{plan['subject']}`")
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        for source in raw.get("sources", []):  # the run snapshots its sources from its root
            src = project_root / str(source["path"])
            if src.is_file() and ".." not in Path(str(source["path"])).parts:
                dest = out / str(source["path"])
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(src.read_bytes())
        settings = VmSettings(
            root=out.resolve(),
            render_root=project_root,
            config=config,
            backend=open_backend("filesystem", out.resolve(), env),
            jobs=1,
            timeout=timeout,
        )
        outcome = start_vm(settings, raw, caller)
    except (VmError, SessionError, BindingError, OSError, ValueError) as exc:
        result.status, result.error = "error", str(exc)
        result.seconds = time.monotonic() - started
        return result
    run = outcome.run
    result.run = str(run.path)
    returned = _returned(raw, outcome.result) if outcome.ok else MISSING
    files = {"__error.md": outcome.error} if not outcome.ok else {}
    seen = Observation(truth=returned, validator=None, rendered=frozenset(), files=files)
    _judge_all(plan, seen, result, judge, replay, run)
    checks_error = any(not a.negated and a.op == "error_file" for a in result.assertions)
    undecided = [a for a in result.assertions if a.decided_by == "error"]
    if not outcome.ok and not checks_error:
        result.status, result.error = "error", f"{plan['subject']} failed: {outcome.error}"
    elif undecided:
        result.status, result.error = "error", undecided[0].observed
    else:
        result.status = "pass" if all(a.ok for a in result.assertions) else "fail"
    result.seconds = time.monotonic() - started
    write_reports(run, result.to_json())
    return result


def _returned(raw: Mapping[str, Any], value: Any) -> Any:
    """What the checks read: the returned object by its `### Returns` names; a lone value
    under the one name the function returns (`scaled`: …)."""
    from ..vm.program import Program

    program = Program.from_json(raw["vm"])
    names = [name for name, _ in program.functions[program.entry].returns]
    if isinstance(value, dict) and (not names or set(names) & set(value)):
        return value
    return {names[0]: value} if len(names) == 1 else {"result": value}


def _judge_all(
    plan: Mapping[str, Any],
    seen: Observation,
    result: TestResult,
    judge: Judge | None,
    replay: Judgements | None,
    run: RunDir,
) -> None:
    judgements = Judgements()
    for check in plan["checks"]:
        outcome = _decide(check, seen, judge, replay, judgements, plan["subject"])
        result.assertions.append(
            Assertion(
                index=check["index"],
                text=check["text"],
                negated=check["negated"],
                negative=bool(check.get("negative", check["negated"])),
                op=check["op"],
                ok=outcome.ok,
                observed=outcome.observed,
                decided_by=outcome.decided_by,
            )
        )
    if judgements.records:
        judgements.write(run.path / JUDGEMENTS)
