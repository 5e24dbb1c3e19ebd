"""A legacy `.prose/runs/{id}/` (seed 000) adopted as the current-layout VM run
`runs/{same id}/`: its compiled intent, sources, agents' memory, and a journal of the
steps it finished (found by runtime/vm/legacy_seed.py), with a nested run folder for
each `use`d program it left half done, so `resume_vm` continues it doing none of them
again. The legacy folder is left as it was."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..canonical import canonical_json
from ..fsio import append_line, atomic_write_bytes, fsync_dir, safe_name
from ..legacy import LIMIT
from ..runs import RunDir
from .journal import JOURNAL, Journal
from .legacy_seed import Seed, legacy_inputs, seed_run
from .program import Program, script_nodes

__all__ = ["adopt_legacy", "legacy_seed", "unmigrated_memory"]


def adopt_legacy(
    root: Path,
    raw: Mapping[str, Any],
    legacy: Path,
    run: Mapping[str, Any],
    *,
    compiled: Mapping[str, bytes],
    origin: str,
    backend: str,
    seed: Seed | None = None,
) -> RunDir:
    """The legacy run folder `legacy` (read as `run`) as the current-layout VM run
    `runs/{same id}/`: compiled-intent.json with the program's `vm` section, the
    program as written and as compiled in sources/, its agents' memory and segments
    under agents/, and vm/journal.jsonl holding every step it finished, so `resume_vm`
    continues it doing none of them again, and a nested run folder for each import it
    left half done. `seed` is legacy_seed(...) when the caller has it already. The legacy
    folder is left as it was."""
    given = legacy_inputs(run)
    raw_vm = raw["vm"]
    seed = seed or legacy_seed(root, raw, run, compiled)
    info = {
        "kind": "vm",
        "wakes": [],
        "backend": backend,
        "started_ns": time.time_ns(),
        "inputs": dict(sorted(given.items())),
        "legacy": origin,
        "legacy_run": legacy.relative_to(root).as_posix()
        if legacy.is_relative_to(root)
        else legacy.name,
    }
    sources = [str(s["path"]) for s in raw.get("sources", [])]
    sources += sorted(set(compiled) - set(sources))
    final = root / "runs" / legacy.name
    if final.exists():
        raise FileExistsError(f"run {legacy.name} exists in {root / 'runs'}")
    # made whole under runs/.adopting/ and renamed into place: a crash leaves no run
    # with half its journal (the next adoption clears the leftover)
    staging = root / "runs" / ".adopting"
    shutil.rmtree(staging / legacy.name, ignore_errors=True)
    made = RunDir.create(
        root,
        legacy.name,
        runs_dir=staging,
        intent_bytes=canonical_json(dict(raw)) + b"\n",
        sources=sources,
        root_source=str(raw_vm.get("target") or "") or None,
        title=str(raw_vm["entry"]),
        upstream=[],
        info=info,
        compiled=compiled,
    )
    agents = legacy / "agents"
    if agents.is_dir():
        for folder in sorted(p for p in agents.iterdir() if p.is_dir()):
            for item in sorted(folder.glob("*.md")):
                if item.is_symlink() or not item.is_file() or item.stat().st_size > LIMIT:
                    continue  # untrusted: a link out of the run, or a huge file, is left
                copy = made.path / "agents" / safe_name(folder.name) / item.name
                atomic_write_bytes(copy, item.read_bytes())
    journal = Journal.open(made.path / JOURNAL)
    for key, kind, value in seed.steps:
        journal.record(key, kind, value)
    journal.flush()
    _lay_nested(made.path, raw_vm, legacy.name, seed)
    if run.get("status") == "complete":  # finished: its result, bindings and end marker
        root_scope = {
            str(b["name"]): b["value"]
            for b in run.get("bindings", [])
            if b.get("execution_id") is None
        }
        outputs = [str(b["name"]) for b in run.get("bindings", []) if b.get("kind") == "output"]
        result: Any = None
        if len(outputs) == 1:
            result = root_scope.get(outputs[0])
        elif outputs:
            result = {name: root_scope.get(name) for name in outputs}
        vm = made.path / "vm"
        atomic_write_bytes(vm / "result.json", canonical_json({"result": result}) + b"\n")
        atomic_write_bytes(vm / "bindings.json", canonical_json(root_scope) + b"\n")
        ended = str(run.get("updated") or "").strip() or "unknown"
        append_line(made.path / "vm.log.md", f"---end {ended}".encode())
    os.rename(made.path, final)
    fsync_dir(final.parent)
    with contextlib.suppress(OSError):
        staging.rmdir()
    return RunDir(final)


def legacy_seed(
    root: Path, raw: Mapping[str, Any], run: Mapping[str, Any], compiled: Mapping[str, bytes]
) -> Seed:
    """The steps the legacy run `run` finished (and its half-done imports'), its program
    compiled as `raw` with the sources `compiled`, in the project `root`."""
    target = str(raw["vm"].get("target") or "")
    source = compiled.get(target, b"").decode("utf-8", errors="replace")
    return seed_run(raw["vm"], run, source, read=_reader(root))


def _reader(root: Path) -> Callable[[str], str]:
    """A nested program's compiled text by its path in the project `root` ("" when it
    cannot be read: its trace lines and loops are then not matched)."""

    def read(path: str) -> str:
        file = root.joinpath(*path.split("/"))
        try:
            if file.is_symlink() or file.stat().st_size > LIMIT:
                return ""
            return file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    return read


def _lay_nested(folder: Path, raw_vm: Mapping[str, Any], run_id: str, seed: Seed) -> None:
    """Each half-done nested run of `seed` as the nested run folder of the VM run (or
    nested run) `folder`, its journal holding the steps the legacy nested run finished:
    the resumed run's call continues it there (runtime/vm/driver.py finds it by the
    calling step's key)."""
    from .driver import free_name, lay_out

    program = Program.from_json(raw_vm)
    for key, handle, spec, below in seed.nested:
        inner = program.nested(spec)
        base = f"{safe_name(handle)}--{safe_name(inner.entry)}"
        target = folder / "imports" / free_name(folder / "imports", base)
        lay_out(folder, target, inner, run_id, key)
        journal = Journal.open(target / JOURNAL)
        for step, kind, value in below.steps:
            journal.record(step, kind, value)
        journal.flush()
        _lay_nested(target, raw_vm, run_id, below)


def unmigrated_memory(
    root: Path, raw_vm: Mapping[str, Any], home: Path, env: Mapping[str, str] | None = None
) -> list[str]:
    """A note for each agent of the program `raw_vm` with `persist: project` or `persist:
    user` whose memory is still in seed 000's place (`.prose/agents/{name}/`,
    `~/.prose/agents/{name}/`) while the current one (`state/agents/{name}/`, the user
    root's) has none: the VM reads the current place only, and moving memory is
    `prosec upgrade`'s change to make (listed, dry-run first), not a run's."""
    from ..agents import user_root

    notes = []
    for function in raw_vm.get("functions", {}).values():
        for node in _agents(function.get("script") or []):
            scope = _persist(node)
            name = str(node.get("name") or "")
            if scope not in ("project", "user") or not name:
                continue
            legacy = (root / ".prose" if scope == "project" else home / ".prose") / "agents" / name
            current = (root if scope == "project" else user_root(env)) / "state" / "agents" / name
            if (legacy / "memory.md").is_file() and not (current / "memory.md").exists():
                upgrade = (
                    "prosec upgrade" if scope == "project" else f"prosec upgrade {home / '.prose'}"
                )
                notes.append(
                    f"agent {name} (persist: {scope}) starts without its legacy memory in "
                    f"{legacy}: the run keeps it in {current}; `{upgrade}` moves it there"
                )
    return sorted(set(notes))


def _agents(node: Any) -> list[Mapping[str, Any]]:
    return [found for found in script_nodes(node) if found.get("t") == "AgentDef"]


def _persist(node: Mapping[str, Any]) -> str | None:
    for item in node.get("properties") or []:
        if item.get("key") != "persist":
            continue
        value = item.get("value") or {}
        if value.get("t") == "Ref" and len(value.get("parts") or []) == 1:
            return str(value["parts"][0]).lower()
        if value.get("t") == "StringLit":
            return str(value.get("value", "")).lower()
    return None
