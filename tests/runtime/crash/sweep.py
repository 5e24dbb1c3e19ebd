"""The crash-point sweep (issue 9): kill a `prosec` command before its K-th mutating file
operation, for every K, recover as a user would, and compare with an uninterrupted run.

The interposer (interpose.c, built here with the system C compiler and loaded with
LD_PRELOAD) counts the process's mutating file operations (opens for writing, writes,
renames, unlinks, mkdirs, truncates, chmods) on paths under the project root and SIGKILLs
the process just before the K-th; with `tear` the K-th write is torn (half of it lands).
SQLite's own writes go through the same calls, so the same sweep covers the SQLite
backend. Recovery is what the README tells a user: `prosec resume` every interrupted run,
and re-issue a command that was killed before it created its run (it was never
acknowledged). Then `prosec receipts verify` must pass and the durable state (ledgers,
versions, published artifacts, key/values, pending records, inbox) must be byte-identical
to the uninterrupted run's.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..project import PROSEC, Project, intent

SOURCE = Path(__file__).with_name("interpose.c")
ZYGOTE = Path(__file__).with_name("zygote.py")
CORPUS = Path(__file__).resolve().parents[3] / "corpus"
# temp files, staging folders and half-made runs that must not outlive a recovery
LEFTOVER = (".tmp-", ".new-", ".old-")


def build_interposer(directory: Path) -> Path:
    """Compile interpose.c into `directory` (CC, else cc); fails loudly without a compiler."""
    library = directory / "interpose.so"
    if not library.exists():
        compiler = os.environ.get("CC", "cc")
        if shutil.which(compiler) is None:
            raise RuntimeError(
                f"the crash-point sweep needs a C compiler ({compiler!r} is not on PATH): "
                "install gcc (Debian: apt-get install gcc)"
            )
        result = subprocess.run(
            [compiler, "-shared", "-fPIC", "-O1", "-o", str(library), str(SOURCE), "-ldl"],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise RuntimeError(f"building the interposer failed:\n{result.stderr}")
    return library


def command_env(root: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("PROSEC_")}
    full.pop("LD_PRELOAD", None)
    full["PROSEC_CACHE_DIR"] = str(root / ".user-cache")
    full.update(env or {})
    return full


def prosec(
    root: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    full = command_env(root, env)
    return subprocess.run(
        [str(PROSEC), *args],
        cwd=root,
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


class Zygote:
    """One warm prosec (zygote.py) with the interposer preloaded: each command is a
    forked child, armed to die before its K-th operation (or not armed)."""

    def __init__(self, library: Path, scratch: Path) -> None:
        self.scratch = scratch
        scratch.mkdir(parents=True, exist_ok=True)
        env = command_env(scratch, {"PROSEC_ZYGOTE_LIBRARY": str(library)})
        env["LD_PRELOAD"] = str(library)
        self.process = subprocess.Popen(
            [sys.executable, str(ZYGOTE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )

    def run(
        self,
        root: Path,
        *args: str,
        env: dict[str, str] | None = None,
        k: int = -1,
        tear: bool = False,
        count: Path | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        out, err = self.scratch / "out", self.scratch / "err"
        request = {
            "args": list(args),
            "cwd": str(root),
            "env": command_env(root, env),
            "k": k,
            "root": str(root.resolve()),
            "tear": int(tear),
            "count": str(count) if count else "",
            "stdout": str(out),
            "stderr": str(err),
            "timeout": timeout,
        }
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        assert answer, "the zygote died"
        code = int(json.loads(answer)["code"])
        return subprocess.CompletedProcess(
            list(args), code, out.read_text(errors="replace"), err.read_text(errors="replace")
        )

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


# -- projects -----------------------------------------------------------------------------

EDGES = [("d", "g", "@atomic"), ("d", "h", "@atomic")]


def runtime_project(root: Path, backend: str) -> Project:
    """Two gateways feeding one node: small enough to sweep every operation."""
    doc = intent(
        {
            "g": {"wake_source": "external"},
            "h": {"wake_source": "external"},
            "d": {"caller_inputs": [{"name": "topic", "type": "text"}]},
        },
        EDGES,
        ["g", "h"],
    )
    toml = (
        f'[run]\nbackend = "{backend}"\njobs = 1\n\n[render.default]\n'
        f'kind = "command"\ncommand = ["{sys.executable}", "renders/node.py"]\n'
    )
    project = Project.create(root, doc, toml=toml)
    project.world("d", {"role": "sink"})
    return project


def _ok(result: subprocess.CompletedProcess[str], what: str) -> None:
    assert result.returncode == 0, f"{what}: exit {result.returncode}\n{result.stderr}"


def prepare_cold(root: Path, backend: str) -> None:
    runtime_project(root, backend)


def prepare_warm(root: Path, backend: str) -> None:
    runtime_project(root, backend)
    _ok(prosec(root, "run", ".", "--input", "topic=weather"), "first run")


def prepare_foreign(root: Path, backend: str) -> None:
    """A warm project whose inbox holds a trigger of `h` that another process queued (and
    was told "queued") while a runner held the lock."""
    prepare_warm(root, backend)
    from prosec.runtime.backends import open_backend

    holder = open_backend(backend, root, {})
    assert holder.try_lock()
    try:
        queued = prosec(root, "trigger", "h", "--data", '{"foreign": 1}')
        _ok(queued, "foreign trigger")
        assert queued.stdout.startswith("queued"), queued.stdout
    finally:
        holder.unlock()
        holder.close()


def prepare_cut(root: Path, backend: str) -> None:
    """A warm project with a trigger run killed mid-commit of `d` (for `resume`)."""
    prepare_warm(root, backend)
    killed = prosec(
        root, "trigger", "g", "--data", '{"n": 7}', env={"PROSEC_CRASH_AT": "after-pending:d"}
    )
    assert killed.returncode == -9, killed.stderr


def prepare_build(root: Path, backend: str) -> None:
    shutil.copytree(CORPUS / "newsroom", root)


# -- state --------------------------------------------------------------------------------


def snapshot(root: Path, backend: str, kind: str) -> dict[str, bytes]:
    """The durable state, by name: files for the filesystem backend and the build, rows
    for SQLite (its file layout is SQLite's own business)."""
    if kind == "build":
        dist = root / "dist"
        return {
            str(p.relative_to(root)): p.read_bytes() for p in sorted(dist.rglob("*")) if p.is_file()
        }
    state = root / "state"
    if backend == "sqlite":
        return _sqlite_rows(state / "prosec.db")
    skip = {".lock", ".cache"}
    out: dict[str, bytes] = {}
    for path in sorted(state.rglob("*")):
        rel = path.relative_to(state)
        if rel.parts[0] in skip:
            continue
        out[str(rel)] = path.read_bytes() if path.is_file() else b"<dir>"
    return out


_CLOCKS = {"created_at", "updated_at", "started_at", "completed_at", "timestamp", "resolved_at"}
# seed 004's run state after recovery: every run ended (completed or failed as the
# uninterrupted one did), nothing left executing, and each node's render completed once
# per run (a render a crash cut is a failed row and a redone one, never two completed)
_RUN_STATE = {
    "run": "SELECT status FROM run",
    "execution": "SELECT statement_text, status, count(*) FROM execution "
    "WHERE statement_text <> 'parallel:' AND status <> 'failed' "
    "GROUP BY run_id, statement_text, status",
}


def _sqlite_rows(db: Path) -> dict[str, bytes]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = [
            name
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if name != "sqlite_sequence"  # AUTOINCREMENT's counter: how many were ever queued
        ]
        out = {}
        for table in sorted(tables):
            if table in _RUN_STATE:  # what recovery must leave there, not its history
                rows = conn.execute(_RUN_STATE[table]).fetchall()
                out[table] = repr(sorted(rows, key=repr)).encode()
                continue
            columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            # an inbox row's id counts what was ever queued; a receipt's run_id names the
            # run that committed it (a recovered run is another run than the reference);
            # clock columns say when, not what
            skip = {"x_inbox": {"id"}, "receipt": {"run_id"}}.get(table, set()) | _CLOCKS
            keep = [c for c in columns if c not in skip]
            rows = conn.execute(f"SELECT {', '.join(keep)} FROM {table}").fetchall()
            out[table] = repr(sorted(rows, key=repr)).encode()
        return out
    finally:
        conn.close()


def leftovers(root: Path) -> list[str]:
    found = []
    for folder in ("state", "runs", "dist"):
        base = root / folder
        if base.is_dir():
            found += [
                str(p.relative_to(root))
                for p in base.rglob("*")
                if any(mark in p.name for mark in LEFTOVER)
            ]
    return sorted(found)


def _run_ids(root: Path) -> set[str]:
    runs = root / "runs"
    return (
        {p.name for p in runs.iterdir() if not p.name.startswith(".")} if runs.is_dir() else set()
    )


def interrupted(root: Path) -> list[str]:
    """The runs `prosec status` lists as interrupted (no end marker), oldest first."""
    from prosec.runtime.runs import runs_in_order

    return [run.run_id for run in runs_in_order(root / "runs") if run.finished() is None]


# -- scenarios ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    name: str
    backend: str
    prepare: Callable[[Path, str], None]
    command: tuple[str, ...]
    kind: str = "runtime"  # or "build"

    @property
    def id(self) -> str:
        return f"{self.name}-{self.backend}"


def scenarios(backend: str) -> list[Scenario]:
    return [
        Scenario("run", backend, prepare_cold, ("run", ".", "--input", "topic=weather")),
        Scenario("trigger", backend, prepare_warm, ("trigger", "g", "--data", '{"n": 7}')),
        Scenario(
            "trigger-foreign", backend, prepare_foreign, ("trigger", "g", "--data", '{"n": 7}')
        ),
        Scenario("resume", backend, prepare_cut, ("resume", "latest")),
    ]


BUILD = Scenario("build", "filesystem", prepare_build, ("build", "."), kind="build")


@dataclass
class Outcome:
    """What one kill point did."""

    k: int
    killed: bool
    problems: list[str] = field(default_factory=list)


class Sweep:
    """One scenario's template, reference state and trials."""

    def __init__(self, scenario: Scenario, work: Path, library: Path, workers: int = 1) -> None:
        self.scenario = scenario
        self.work = work
        self.library = library
        self.template = work / "template"
        self._zygotes: queue.Queue[Zygote] = queue.Queue()
        self._all = [Zygote(library, work / f"zygote{i}") for i in range(workers)]
        for zygote in self._all:
            self._zygotes.put(zygote)
        scenario.prepare(self.template, scenario.backend)
        self.reference = self._reference()

    def close(self) -> None:
        for zygote in self._all:
            zygote.close()

    def _copy(self, name: str) -> Path:
        root = self.work / name
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(self.template, root, symlinks=True)
        return root

    def _recover(self, zygote: Zygote, root: Path, before: set[str]) -> list[str]:
        prosec = zygote.run
        problems: list[str] = []
        if self.scenario.kind == "build":
            result = prosec(root, *self.scenario.command)
            if result.returncode != 0:
                problems.append(f"build after the kill: exit {result.returncode}: {result.stderr}")
            return problems
        for run_id in interrupted(root):
            result = prosec(root, "resume", run_id)
            if result.returncode != 0:
                problems.append(f"resume {run_id}: exit {result.returncode}: {result.stderr}")
        created = _run_ids(root) - before
        if not created and self.scenario.name != "resume":
            result = prosec(root, *self.scenario.command)  # never acknowledged: re-issue it
            if result.returncode != 0:
                problems.append(f"re-issued command: exit {result.returncode}: {result.stderr}")
        return problems

    def _reference(self) -> dict[str, bytes]:
        root = self._copy("reference")
        zygote = self._zygotes.get()
        try:
            _ok(zygote.run(root, *self.scenario.command), "uninterrupted command")
        finally:
            self._zygotes.put(zygote)
        if self.scenario.kind == "runtime":
            assert not interrupted(root)
        return snapshot(root, self.scenario.backend, self.scenario.kind)

    def trial(self, k: int, *, tear: bool = False) -> Outcome:
        zygote = self._zygotes.get()
        try:
            return self._trial(zygote, k, tear)
        finally:
            self._zygotes.put(zygote)

    def _trial(self, zygote: Zygote, k: int, tear: bool) -> Outcome:
        root = self._copy(f"k{k}{'t' if tear else ''}")
        before = _run_ids(root)
        result = zygote.run(root, *self.scenario.command, k=k, tear=tear)
        outcome = Outcome(k=k, killed=result.returncode == -9)
        if not outcome.killed:
            if result.returncode != 0:
                outcome.problems.append(f"exit {result.returncode}: {result.stderr}")
            shutil.rmtree(root, ignore_errors=True)
            return outcome
        outcome.problems += self._recover(zygote, root, before)
        if self.scenario.kind == "runtime":
            # what `prosec receipts verify .` runs, in this process (one start-up less)
            from prosec.runtime.verify import verify_path

            report = verify_path(root.resolve(), env={})
            if not report.ok:
                shown = "; ".join(str(f) for f in report.findings[:3])
                outcome.problems.append(f"receipts verify: {shown or 'nothing verified'}")
        state = snapshot(root, self.scenario.backend, self.scenario.kind)
        if state != self.reference:
            differ = sorted(
                name
                for name in set(state) | set(self.reference)
                if state.get(name) != self.reference.get(name)
            )
            outcome.problems.append(f"state differs from the uninterrupted run: {differ[:6]}")
        left = leftovers(root)
        if left:
            outcome.problems.append(f"left behind: {left[:4]}")
        if not outcome.problems:
            shutil.rmtree(root, ignore_errors=True)
        return outcome

    def count(self) -> int:
        """The mutating operations of an uninterrupted command."""
        root = self._copy("count")
        counted = self.work / "count.txt"
        zygote = self._zygotes.get()
        try:
            _ok(zygote.run(root, *self.scenario.command, k=0, count=counted), "counting run")
        finally:
            self._zygotes.put(zygote)
        shutil.rmtree(root, ignore_errors=True)
        return int(counted.read_text())
