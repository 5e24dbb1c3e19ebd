"""Start, resume and replay a VM run (`prosec run FILE`, `prosec resume RUN`).

A VM run has the seed 001 layout (compiled-intent.json with its `vm` section,
root.prose.md, sources/, workspace/, world-model/caller/, vm.log.md) plus `vm/`:
`journal.jsonl` (the completed steps), and, when it ends, `result.json` (what the entry
function returned) and `bindings.json` (its top-level bindings), both canonical JSON.
`run.json` says `"kind": "vm"` and holds the caller inputs, so `prosec resume` needs
nothing else.
"""

from __future__ import annotations

import dataclasses
import fcntl
import itertools
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..backends import Backend
from ..canonical import canonical_json
from ..config import RunConfig
from ..fsio import atomic_write_bytes, atomic_write_text, remove_leftovers, safe_name
from ..protocol import BindingKind
from ..renders import parse_cli_binding
from ..renders.process import kill_survivors
from ..runs import RunDir, new_run_id, utc_now
from ..userjson import loads
from .calls import Invoker, bind_for
from .interp import Interpreter, Program, ProseError
from .journal import JOURNAL, Journal
from .memory import memory_problems
from .narrate import Event, InContext, Recorder, VmLog
from .nested import Unrecorded
from .record import StepRecorder
from .sinks import open_sink

__all__ = ["VmOutcome", "VmSettings", "missing_inputs", "resume_vm", "start_vm"]


class VmError(ValueError):
    """A usage problem starting or resuming a VM run (exit 2)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class VmSettings:
    root: Path
    config: RunConfig
    backend: Backend
    renders: tuple[str, ...] = ()  # --render NODE=KIND:VALUE
    jobs: int | None = None
    timeout: float | None = None
    narrate: Callable[[str], None] | None = None  # the in-context narration's output
    checkpoint: Callable[[int], None] | None = None  # after each journal line (tests)
    # the renders' root (working directory, PROSEC_ROOT) when it is not `root`: `prosec
    # test` keeps a test's runs in a folder of its own and renders from the project
    render_root: Path | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class VmOutcome:
    run: RunDir
    ok: bool
    result: Any = None
    error: str = ""
    performed: tuple[str, ...] = field(default_factory=tuple)


def missing_inputs(raw: Mapping[str, Any], given: Mapping[str, str]) -> list[tuple[str, str]]:
    """The entry's parameters not given: (name, description) in declared order."""
    program = Program.from_json(raw["vm"])
    entry = program.functions[program.entry]
    return [(name, text) for name, text in entry.parameters if name not in given]


def unknown_inputs(raw: Mapping[str, Any], given: Mapping[str, str]) -> list[str]:
    program = Program.from_json(raw["vm"])
    declared = {name for name, _ in program.functions[program.entry].parameters}
    return sorted(set(given) - declared)


def start_vm(
    settings: VmSettings,
    raw: Mapping[str, Any],
    given: Mapping[str, str],
    *,
    replay: Path | None = None,
    compiled: Mapping[str, bytes] | None = None,
    origin: str | None = None,
) -> VmOutcome:
    """A new run of `raw`'s `vm` entry. `compiled` holds sources as compiled when they
    differ from the project's files (a legacy program's Contract Markdown form, made in
    memory); `origin` names the legacy `.prose` program the run came from."""
    program = Program.from_json(raw["vm"])
    _refuse_memory(program, settings.root)
    if replay is not None:
        Journal.open(replay / JOURNAL)  # verified before the run is created
    sources = [str(s["path"]) for s in raw.get("sources", [])]
    sources += sorted(set(compiled or ()) - set(sources))
    info = {
        "kind": "vm",
        "wakes": [],
        "backend": settings.backend.name,
        "started_ns": time.time_ns(),
        "inputs": dict(sorted(given.items())),
    }
    if replay is not None:
        info["replay"] = replay.name
    if origin is not None:
        info["legacy"] = origin
    runs_dir = None
    if settings.backend.ephemeral:
        runs_dir = Path(tempfile.mkdtemp(prefix="prosec-in-context-"))
    run = RunDir.create(
        settings.root,
        new_run_id(),
        runs_dir=runs_dir,
        intent_bytes=canonical_json(dict(raw)) + b"\n",
        sources=sources,
        root_source=program.target or None,
        title=program.entry,
        upstream=[],
        info=info,
        compiled=compiled,
    )
    return _execute(settings, program, run, given, replay, fresh=True)


def resume_vm(settings: VmSettings, run: RunDir) -> VmOutcome:
    raw = loads((run.path / "compiled-intent.json").read_bytes(), source=str(run.path))
    if not isinstance(raw, dict) or not isinstance(raw.get("vm"), dict):
        raise VmError(f"run {run.run_id}: its compiled intent has no `vm` section")
    kill_survivors(settings.root / "runs")  # renders the interrupted runner left running
    info = run.info()
    given = {str(k): str(v) for k, v in dict(info.get("inputs", {})).items()}
    replay = settings.root / "runs" / str(info["replay"]) if info.get("replay") else None
    program = Program.from_json(raw["vm"])
    _refuse_memory(program, settings.root)
    return _execute(settings, program, run, given, replay, fresh=False)


def _refuse_memory(program: Program, root: Path) -> None:
    """An agent's custom memory folder that leaves the project stops the run before it
    starts (or resumes), naming the program file and line."""
    problems = memory_problems(program, root)
    if problems:
        raise VmError("; ".join(problems))


def _execute(
    settings: VmSettings,
    program: Program,
    run: RunDir,
    given: Mapping[str, str],
    replay: Path | None,
    *,
    fresh: bool,
) -> VmOutcome:
    lock = _lock(run)
    try:
        # the seed 004 rows (run, executions, bindings, agents, imports) of the store
        record = StepRecorder(
            sink=open_sink(settings.backend, run.path, run.run_id),
            run_id=run.run_id,
            sources=run.path / "sources",
        )
        copy = run.path / "root.prose.md"
        record.started(
            root_path=str(settings.root / program.target) if program.target else None,
            root_source=copy.read_text(encoding="utf-8", errors="replace")
            if copy.is_file()
            else None,
            entry=program.entry,
        )
        return _locked(settings, program, run, given, replay, record)
    finally:
        lock.close()


def _outputs(record: StepRecorder, program: Program, result: Any) -> None:
    """The entry's declared returns as `output` bindings, scoped to the run's `output`
    row (a root `let` of the same name keeps its own row: seed 004's bindings key is
    name, run and execution scope)."""
    names = [name for name, _ in program.functions[program.entry].returns]
    if not names:
        return
    with record.row("output", "output", text="output: " + ", ".join(names)):
        if len(names) == 1 and not (isinstance(result, dict) and names[0] in result):
            record.bind("output", names[0], BindingKind.OUTPUT, result, key="output")
            return
        for name in names:
            if isinstance(result, dict) and name in result:
                record.bind("output", name, BindingKind.OUTPUT, result[name], key="output")


def _lock(run: RunDir) -> Any:
    """An exclusive lock on the run (held until the process ends or the run does): a
    second `prosec resume` of a running run is refused."""
    path = run.path / "vm" / "lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = path.open("a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise VmError(f"run {run.run_id} is running in another process") from None
    return handle


def _locked(
    settings: VmSettings,
    program: Program,
    run: RunDir,
    given: Mapping[str, str],
    replay: Path | None,
    record: StepRecorder,
) -> VmOutcome:
    remove_leftovers(run.path)  # temp files of writes a kill interrupted
    journal = Journal.open(run.path / JOURNAL)
    replayed = _follow(journal, replay)
    if settings.checkpoint is not None:  # counts the lines of every journal of the run
        counter = itertools.count(1)
        checkpoint = settings.checkpoint
        counted: Callable[[int], None] = lambda seq: checkpoint(next(counter))  # noqa: E731
        settings = dataclasses.replace(settings, checkpoint=counted)
        journal.on_record = counted
    log = VmLog(run.path / "vm.log.md")
    narrators: list[Callable[[Event], None]] = [log]
    if settings.narrate is not None:
        in_context = InContext(settings.narrate)
        in_context.start()
        narrators.append(in_context)

    def emit(event: Event) -> None:
        for narrator in narrators:
            narrator(event)

    cli: dict[str, dict[str, Any]] = {}
    for text in settings.renders:
        node, table = parse_cli_binding(text)
        cli[node] = table
    invoker = Invoker(
        root=settings.render_root or settings.root,
        run_dir=run.path,
        run_id=run.run_id,
        bind=bind_for(cli, settings.config.render_nodes, settings.config.render_default),
        timeout=settings.timeout or settings.config.timeout,
        jobs=settings.jobs or settings.config.jobs,
        memory_root=run.path,
        ephemeral=settings.backend.ephemeral,
        default_model=settings.config.default_model,
        remember=record.remember,
    )
    entry = program.functions[program.entry]
    args: dict[str, Any] = {}
    for name, _ in entry.parameters:
        if name not in given:
            continue
        args[name] = _decoded(given[name])
        text = f"# {name}\n\nbinding: input\nsource: caller\n\n---\n\n{given[name]}\n"
        atomic_write_text(run.path / "world-model" / "caller" / f"{name}.md", text)
        journal.record(f"input:{name}", "bind", given[name])
        record.bind("", name, BindingKind.INPUT, given[name], key=f"input:{name}", source="caller")
        emit(Event(kind="input", name=name))
    interpreter = Interpreter(
        program=program,
        journal=journal,
        perform=invoker.run,
        emit=Recorder(forward=emit),
        replay=replayed,
        nest=_nester(settings, program, run.path, run.run_id, invoker, record, replay),
        record=record,
    )
    try:
        try:
            result = interpreter.run(args)
        except RecursionError:
            raise ProseError(
                "the program nests too deeply (calls or blocks inside themselves)"
            ) from None
        finally:
            journal.flush()
    except ProseError as error:
        message = _message(error.value)
        record.ended(False)  # before the end marker: a lost store leaves the run resumable
        log.close(f"---error {utc_now()} {message}")
        if settings.narrate is not None:
            settings.narrate(f"---error {message}")
        return VmOutcome(run=run, ok=False, error=message, performed=tuple(interpreter.performed))
    _outputs(record, program, result)
    atomic_write_bytes(run.path / "vm" / "result.json", canonical_json({"result": result}) + b"\n")
    bindings = canonical_json(dict(sorted(interpreter.bindings.items()))) + b"\n"
    atomic_write_bytes(run.path / "vm" / "bindings.json", bindings)
    record.ended(True)
    log.close(f"---end {utc_now()}")
    if settings.narrate is not None:
        settings.narrate("---end")
    return VmOutcome(run=run, ok=True, result=result, performed=tuple(interpreter.performed))


def _follow(journal: Journal, replay: Path | None) -> dict[str, Any] | None:
    """A replay's recorded steps by key, and `journal` set to write them in their
    recorded order (None when the run is not a replay)."""
    if replay is None:
        return None
    original = Journal.open(replay / JOURNAL)
    journal.follow(original.keys())
    return original.effects()


def _nester(
    settings: VmSettings,
    program: Program,
    parent: Path,
    run_id: str,
    invoker: Invoker,
    record: StepRecorder,
    replay: Path | None = None,
) -> Callable[[str, Mapping[str, str], dict[str, Any], str], Any]:
    """Runs a `use`d program called as `handle` in `parent/imports/{handle}--{entry}/`, a
    run folder of its own (compiled-intent.json, root.prose.md, sources/, workspace/,
    world-model/caller/, vm.log.md, vm/journal.jsonl, imports/ for its own imports).
    Each call has a folder of its own: the first `{handle}--{slug}`, the next ones
    `{handle}--{slug}-002`, `-003`, … (3 digits, 4 past 999, as agent memory segments
    are numbered), in the order the calls start. `vm/call.json` names the calling step,
    so a resumed run continues each nested run where it stopped, and a replay lays its
    nested runs out under the names the replayed run gave them and replays each from
    the replayed nested journal."""
    allocating = threading.Lock()

    def nest(handle: str, spec: Mapping[str, str], args: dict[str, Any], key: str) -> Any:
        nested = program.nested(spec)
        base = f"{safe_name(handle)}--{safe_name(nested.entry)}"
        with allocating:
            folder = _call_folder(parent / "imports", key)
            recorded = _call_folder(replay / "imports", key) if replay is not None else None
            if replay is not None and recorded is None:
                raise Unrecorded(key)  # the replay takes the call's recorded result
            if folder is None:
                name = (
                    recorded.name if recorded is not None else free_name(parent / "imports", base)
                )
                folder = parent / "imports" / name
                lay_out(parent, folder, nested, run_id, key)
        remove_leftovers(folder)
        journal = Journal.open(folder / JOURNAL)
        replayed = _follow(journal, recorded)
        if settings.checkpoint is not None:
            journal.on_record = settings.checkpoint
        log = VmLog(folder / "vm.log.md")
        entry = nested.functions.get(nested.entry)
        if entry is None:
            raise ProseError(f"`{handle}`: the imported program has no function {nested.entry}")
        for name, _ in entry.parameters:
            if name in args:
                value = args[name]
                text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
                body = f"# {name}\n\nbinding: input\nsource: caller\n\n---\n\n{text}\n"
                atomic_write_text(folder / "world-model" / "caller" / f"{name}.md", body)
                journal.record(f"{key}:input:{name}", "bind", value)
                log(Event(kind="input", name=name))
        sub = Invoker(
            root=settings.render_root or settings.root,
            run_dir=folder,
            run_id=run_id,
            bind=invoker.bind,
            timeout=invoker.timeout,
            jobs=invoker.jobs,
            memory_root=invoker.memory_root,
            ephemeral=invoker.ephemeral,
            default_model=invoker.default_model,
            remember=invoker.remember,
        )
        inner = record.nested(handle)
        interpreter = Interpreter(
            program=nested,
            journal=journal,
            perform=sub.run,
            emit=log,
            replay=replayed,
            nest=_nester(settings, nested, folder, run_id, sub, inner, recorded),
            record=inner,
        )
        try:
            try:
                value = interpreter.run(args, key=f"{key}>main")
            finally:
                journal.flush()
        except ProseError as error:
            log.close(f"---error {utc_now()} {_message(error.value)}")
            raise
        log.close(f"---end {utc_now()}")
        return value

    return nest


def _call_folder(imports: Path, key: str) -> Path | None:
    """The nested run folder of the call journaled as `key`, if one was laid out."""
    if not imports.is_dir():
        return None
    for folder in sorted(imports.iterdir()):
        marker = folder / "vm" / "call.json"
        if folder.name.startswith(".") or not marker.is_file():
            continue
        found = loads(marker.read_bytes(), source=str(marker))
        if isinstance(found, dict) and found.get("key") == key:
            return folder
    return None


def free_name(imports: Path, base: str) -> str:
    """`base` if no call took it yet, else `base-NNN` with the first free number."""
    if not (imports / base).exists():
        return base
    for number in itertools.count(2):
        name = f"{base}-{number:03d}"
        if not (imports / name).exists():
            return name
    raise AssertionError("unreachable")


def lay_out(parent: Path, folder: Path, program: Program, run_id: str, key: str) -> None:
    """A nested run folder, built under a hidden name and renamed whole."""
    building = folder.with_name(f".new-{folder.name}")
    shutil.rmtree(building, ignore_errors=True)
    for sub in (
        "sources",
        "workspace",
        "world-model/caller",
        "receipts",
        "agents",
        "vm",
        "imports",
    ):
        (building / sub).mkdir(parents=True, exist_ok=True)
    raw = loads((parent / "compiled-intent.json").read_bytes(), source=str(parent))
    if isinstance(raw, dict) and isinstance(raw.get("vm"), dict):
        raw["vm"] = {**raw["vm"], "entry": program.entry, "target": program.target}
    atomic_write_bytes(building / "compiled-intent.json", canonical_json(raw) + b"\n")
    if (parent / "sources").is_dir():
        shutil.copytree(parent / "sources", building / "sources", dirs_exist_ok=True)
    root_source = parent / "sources" / program.target
    if root_source.is_file():
        atomic_write_bytes(building / "root.prose.md", root_source.read_bytes())
    header = f"# run:{run_id}/{folder.name} {program.entry}\nroot: {program.target}\n\n"
    atomic_write_text(building / "vm.log.md", header)
    atomic_write_bytes(building / "vm" / "call.json", canonical_json({"key": key}) + b"\n")
    os.rename(building, folder)


def _decoded(text: str) -> Any:
    """An input as the script sees it: a JSON array or object written as one is that
    value (so `for x in items` walks it); anything else is the text as given."""
    if text.strip()[:1] in ("[", "{"):
        try:
            return loads(text.encode("utf-8"), source="input")
        except ValueError:
            return text
    return text


def _message(value: Any) -> str:
    """The error as one line (vm.log.md's `---error` marker is one line)."""
    if isinstance(value, dict) and "error" in value:
        text = f"{value['error']}: {value.get('detail', '')}".strip()
    else:
        text = str(value)
    return " ".join(text.split())


__all__ += ["VmError", "unknown_inputs"]
