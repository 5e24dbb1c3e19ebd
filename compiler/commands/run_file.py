"""`prosec run FILE`: compile one program file in memory and run it, no build/activate.

A `kind: function` runs in the VM (prosec.runtime.vm) with the sibling functions of its
project; an `index.prose.md` brings its folder's program and a responsibility its
project, both mounted and reconciled as `prosec run ROOT` does, with `root:` naming the
file. Gateways and patterns are refused with the reason, a test is sent to `prosec test`.
Caller inputs: `--input name=value`, `--name value`, `--name=value` and, after `--`,
`name: value`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .. import report
from ..discover import DiscoveryError, discover, project_key
from ..ir import Contract, ContractKind
from .common import load_config
from .errors import ExitCode, fail, user_errors

if TYPE_CHECKING:
    from prosec.runtime.config import RunConfig

__all__ = ["legacy_memory", "parse_extra_inputs", "run_file"]


def parse_extra_inputs(extra: tuple[str, ...] | list[str]) -> dict[str, str]:
    """Inputs written as `--name value`, `--name=value`, `name: value` or `name:` `value`."""
    given: dict[str, str] = {}
    items = list(extra)
    index = 0
    while index < len(items):
        item = items[index]
        if item.startswith("--") and len(item) > 2:
            name, sep, value = item[2:].partition("=")
            if not sep:
                if index + 1 >= len(items):
                    fail(f"--{name}: expected a value after it")
                index += 1
                value = items[index]
        elif ":" in item:
            name, _, value = item.partition(":")
            value = value.strip()
            if not value and index + 1 < len(items):
                index += 1
                value = items[index]
        else:
            fail(f"unexpected argument {item!r}: inputs are `--name value` or `-- name: value`")
        name = name.strip()
        if not name:
            fail(f"{item!r}: an input needs a name")
        given[name] = value
        index += 1
    return given


def vm_checkpoint() -> Callable[[int], None] | None:
    """PROSEC_VM_CRASH_AFTER=N kills this process with SIGKILL right after the journal's
    Nth line is durable (tests of `prosec resume`)."""
    spec = os.environ.get("PROSEC_VM_CRASH_AFTER", "")
    if not spec:
        return None
    if not spec.isdigit():
        fail(f"PROSEC_VM_CRASH_AFTER={spec!r}: expected a step number")
    after = int(spec)

    def checkpoint(seq: int) -> None:
        if seq == after:
            os.kill(os.getpid(), signal.SIGKILL)

    return checkpoint


def _compile(path: Path, legacy: tuple[str, str] | None = None) -> tuple[Path, str, Any, Contract]:
    """(project root, display path of the file, compile result, the file's contract).
    `legacy` is a legacy program's (display path, Contract Markdown form): compiled in
    place of any file at that path."""
    from ..legacy_compile import compile_source
    from ..lint import read_source
    from ..pipeline import compile_texts, importer

    root = project_key(path)
    config = load_config(root)
    target = path.resolve().relative_to(root).as_posix()
    try:
        if path.name == "index.prose.md":
            refs = discover([path.parent], root)
            texts = []
            for ref in refs:
                text, problem = read_source(ref)
                if text is not None and problem is None:
                    texts.append((ref.display, text))
            result = compile_texts(texts, config, imports=importer(root))
            own = [f for f in result.unit.project.files if f.path == target]
            contracts = [c for c in own[0].contracts if not c.inline] if own else []
        elif legacy is not None:
            result, contracts = compile_source(root, config, legacy[0], legacy[1], legacy=target)
            target = legacy[0]
        else:
            result, contracts = compile_source(root, config, target, None, file=path)
    except (DiscoveryError, OSError, UnicodeDecodeError) as exc:
        fail(f"{path}: {exc}")
    if not contracts:
        sys.stdout.write(report.render(result.diagnostics, "text"))
        fail(f"{target}: no contract in this file to run")
    return root, target, result, contracts[0]


def _refuse(contract: Contract, target: str) -> None:
    kind = contract.kind
    if kind == ContractKind.GATEWAY:
        fail(
            f"{target}: `{contract.name}` is a gateway, which is not run directly: it brings "
            "the outside world in; run the project and wake it with `prosec trigger "
            f"{contract.name} --data …`"
        )
    if kind == ContractKind.PATTERN:
        fail(
            f"{target}: `{contract.name}` is a pattern, which is not runnable: it is expanded "
            "at compile time where an instance names it (`pattern:` … `with:`)"
        )
    if kind not in (ContractKind.FUNCTION, ContractKind.RESPONSIBILITY):
        fail(f"{target}: kind {kind!r} cannot run (a function or a responsibility can)")


def _route_to_test(
    path: Path, target: str, contract: Contract, jobs: int | None, timeout: float | None
) -> None:
    """A test file runs through the test runner, as `prosec test FILE` would."""
    from .test import test_command

    click.echo(
        f"prosec: {target}: `{contract.name}` is a test; running it with prosec test", err=True
    )
    options: dict[str, Any] = {"paths": (path,), "timeout": timeout}
    if jobs is not None:
        options["jobs"] = jobs
    click.get_current_context().invoke(test_command, **options)
    sys.exit(ExitCode.OK)


def _ask_missing(missing: list[tuple[str, str]], given: dict[str, str], target: str) -> None:
    if missing and sys.stdin.isatty() and sys.stderr.isatty():
        for name, description in missing:
            given[name] = click.prompt(f"{name} ({description})" if description else name)
        return
    if missing:
        lines = [f"{target}: missing required input{'s' if len(missing) > 1 else ''}:"]
        lines += [f"  {name}: {description}" for name, description in missing]
        lines.append("pass each as --NAME VALUE (or --input NAME=VALUE, or -- NAME: VALUE)")
        fail("\n".join(lines))


def run_file(
    path: Path,
    given: dict[str, str],
    *,
    renders: tuple[str, ...],
    jobs: int | None,
    timeout: float | None,
    backend: str | None,
    as_json: bool,
    replay: str | None,
) -> None:
    legacy = _legacy_form(path) if path.name.endswith(".prose") else None
    if not path.name.endswith(".prose.md") and legacy is None:
        fail(
            f"{path}: not a .prose.md file (prosec run takes a program file, a legacy "
            ".prose program or a project folder)"
        )
    root, target, result, contract = _compile(path, legacy[:2] if legacy else None)
    if result.has_errors or result.intent is None:
        sys.stdout.write(report.render(result.diagnostics, "text"))
        click.echo(f"prosec: {target} does not compile; nothing ran", err=True)
        sys.exit(ExitCode.FINDINGS)
    if contract.kind == ContractKind.TEST and path.name != "index.prose.md":
        _route_to_test(path, target, contract, jobs, timeout)
    if path.name != "index.prose.md":
        _refuse(contract, target)
    if contract.kind == ContractKind.FUNCTION and path.name != "index.prose.md":
        _run_function(
            root,
            target,
            result,
            contract,
            given,
            renders,
            jobs,
            timeout,
            backend,
            as_json,
            replay,
            legacy=legacy,
        )
        return
    from .run import run_intent

    run_intent(root, dict(result.intent), target, given, renders, jobs, timeout, backend, as_json)


def _run_function(
    root: Path,
    target: str,
    result: Any,
    contract: Contract,
    given: dict[str, str],
    renders: tuple[str, ...],
    jobs: int | None,
    timeout: float | None,
    backend: str | None,
    as_json: bool,
    replay: str | None,
    *,
    legacy: tuple[str, str, str, bytes] | None = None,
) -> None:
    from prosec.runtime.backends import open_backend
    from prosec.runtime.config import load_config as runtime_config
    from prosec.runtime.runs import RunDir, resolve_run
    from prosec.runtime.vm import VmSettings, missing_inputs, start_vm, unknown_inputs

    from ..codegen.vm import vm_section

    raw: dict[str, Any] = dict(result.intent)
    raw["vm"] = vm_section(result.unit.project, target, contract.name)
    target = legacy[2] if legacy is not None else target  # as the user named it
    unknown = unknown_inputs(raw, given)
    if unknown:
        declared = ", ".join(n for n, _ in missing_inputs(raw, {})) or "none"
        fail(f"{target}: unknown input {unknown[0]!r} (`{contract.name}` takes: {declared})")
    _ask_missing(missing_inputs(raw, given), given, target)
    with user_errors():
        config = _with_model_flag(runtime_config(root))
        store = open_backend(backend or config.backend, root, dict(os.environ))
        replay_dir = RunDir(resolve_run(root, replay)).path if replay else None
    in_context = store.ephemeral
    settings = VmSettings(
        root=root,
        config=config,
        backend=store,
        renders=renders,
        jobs=jobs,
        timeout=timeout,
        narrate=(lambda line: click.echo(line, err=True)) if in_context else None,
        checkpoint=vm_checkpoint(),
    )
    compiled, origin = None, None
    if legacy is not None:  # the run keeps the program as written and as compiled
        virtual, markdown, origin, original = legacy
        compiled = {virtual: markdown.encode("utf-8"), origin: original}
        legacy_memory(root, raw["vm"])
    with user_errors():
        outcome = start_vm(
            settings, raw, given, replay=replay_dir, compiled=compiled, origin=origin
        )
    _report(outcome, as_json)


def legacy_memory(root: Path, raw_vm: Any) -> None:
    """Say which agents' legacy memory (seed 000's places) the run will not read."""
    from prosec.runtime.vm.legacy_adopt import unmigrated_memory

    for note in unmigrated_memory(root, raw_vm, Path.home()):
        click.echo(f"prosec: note: {note}", err=True)


def _legacy_form(path: Path) -> tuple[str, str, str, bytes]:
    """A legacy `.prose` program compiled as its Contract Markdown form (what `prosec
    upgrade` would write beside it): (that file's display path, its text, the legacy
    file's display path, its bytes)."""
    from ..legacy import convert

    try:
        original = path.read_bytes()
        text = original.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{path}: {exc}")
    root = project_key(path)
    display = path.resolve().relative_to(root).as_posix()
    form = convert(text, display)
    for note in form.notes:
        click.echo(f"prosec: note: {note}", err=True)
    return f"{display}.md", form.markdown, display, original


def _report(outcome: Any, as_json: bool) -> None:
    code = ExitCode.OK if outcome.ok else ExitCode.FINDINGS
    if as_json:
        document: Mapping[str, Any] = {
            "run_id": outcome.run.run_id,
            "path": str(outcome.run.path),
            "ok": outcome.ok,
            "result": outcome.result,
            "error": outcome.error or None,
            "exit_code": int(code),
        }
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        sys.exit(code)
    if outcome.ok:
        value = outcome.result
        click.echo(
            value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
        )
        click.echo(f"run {outcome.run.run_id}: done ({outcome.run.path / 'vm.log.md'})", err=True)
    else:
        click.echo(f"run {outcome.run.run_id}: failed: {outcome.error}", err=True)
        click.echo(f"  the log: {outcome.run.path / 'vm.log.md'}", err=True)
    sys.exit(code)


def resume_file(
    root: Path,
    run: Any,
    renders: tuple[str, ...],
    jobs: int | None,
    timeout: float | None,
    backend: str | None,
    as_json: bool,
) -> None:
    """Continue a program file run from its journal (`prosec resume RUN`)."""
    from prosec.runtime.backends import open_backend
    from prosec.runtime.config import load_config as runtime_config
    from prosec.runtime.vm import VmSettings, resume_vm

    if run.finished():
        click.echo(f"run {run.run_id} already finished ({run.finished()})")
        sys.exit(ExitCode.OK)
    with user_errors():
        config = _with_model_flag(runtime_config(root))
        store = open_backend(backend or config.backend, root, dict(os.environ))
        settings = VmSettings(
            root=root.resolve(),
            config=config,
            backend=store,
            renders=renders,
            jobs=jobs,
            timeout=timeout,
        )
        outcome = resume_vm(settings, run)
    _report(outcome, as_json)


def _with_model_flag(config: RunConfig) -> RunConfig:
    """The runtime settings with `--model` applied (it wins over .env and prose.toml)."""
    from .run import MODEL_FLAG

    model = click.get_current_context().meta.get(MODEL_FLAG)
    return config if model is None else config.overridden(default_model=model)
