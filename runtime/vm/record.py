"""The VM's run state as seed 004 rows: executions, scoped bindings, agents, imports.

The interpreter tells a `StepRecorder` where it is at each step boundary (a statement,
a scripted function or block invocation, a loop iteration, a parallel branch); the
recorder writes it through a `Sink`: the SQL tables of the configured store
(PostgreSQL, SQLite; in-context: an in-memory SQLite database) or, on the filesystem,
the hash-chained `runs/{id}/vm/state.jsonl` (statelog.py).

Every execution row carries the journal's step key in `metadata.key`; a resumed run
loads the rows by key and continues them instead of adding new ones: a completed or
failed row is final, a row a cut left `executing` is picked up again and counts the
attempt in `retry_attempt` (2 for the first resume). A row's parent is the row of the
longest recorded prefix of its key (`main/3@0/1` → `main/3@0` → `main/3`).

Bindings are scoped as seed 004 says: `execution_id` NULL at the entry function's top
level, else the row of the innermost frame that holds the name (a scripted function
or block invocation, a `use`d program's run, a loop iteration), so the seed's
scope-chain query from any row finds the binding visible there. A nested body (an
if/elif/else branch, a choice option, a try/catch/finally body, a `do:` block, a
pipeline item) has a row of its own and is the frame of what it binds. An expression
statement whose value is a call or session result is bound as `anon_NNN`, NNN its
statement's place in the program (never the order steps ran in, which parallel
branches make a race), in its frame's scope; the entry's declared returns are
`output` bindings scoped to the run's `output` row, so a root `let` of the same name
keeps its own row under seed 004's key (name, run, execution scope).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..canonical import canonical_json
from ..protocol import AgentScope, BindingKind, ExecutionStatus, RunStatus
from .program import BreakSignal, ContinueSignal, ProseError, ReturnSignal, message_of

if TYPE_CHECKING:
    from ..agents import AgentMemory
    from .program import Program

__all__ = ["NULL_RECORDER", "Sink", "StepRecorder", "text_of"]

_SEPARATORS = "/@|.>#?["
_FRAMES = ("function", "block", "iteration", "program")
_SCOPES = {
    "true": AgentScope.EXECUTION,
    "project": AgentScope.PROJECT,
    "user": AgentScope.USER,
    "path": AgentScope.CUSTOM,
}


def text_of(value: Any) -> str:
    """A value as a binding's text: a string as is, anything else canonical JSON."""
    return value if isinstance(value, str) else canonical_json(value).decode("utf-8")


class Sink(Protocol):
    """Where a run's rows go (one run; every call is made under the recorder's lock)."""

    def rows(self) -> dict[str, tuple[int, str, int, dict[str, Any]]]:
        """The run's execution rows by step key: (id, status, statement_index, metadata)."""
        ...

    def anonymous(self) -> dict[str, str]:
        """The run's anonymous bindings: step key → anon_NNN."""
        ...

    def run_started(
        self, *, root_path: str | None, root_source: str | None, metadata: Mapping[str, Any]
    ) -> None: ...

    def run_ended(self, status: RunStatus) -> None: ...

    def begin(
        self, *, parent_id: int | None, index: int, text: str | None, metadata: Mapping[str, Any]
    ) -> int: ...

    def end(
        self, row: int, status: ExecutionStatus, error: str | None, metadata: Mapping[str, Any]
    ) -> None: ...

    def annotate(self, row: int, metadata: Mapping[str, Any]) -> None: ...

    def binding(
        self,
        name: str,
        kind: BindingKind,
        value: str,
        execution_id: int | None,
        source: str | None,
        metadata: Mapping[str, Any],
    ) -> None: ...

    def agent(
        self, name: str, scope: AgentScope, memory: str, metadata: Mapping[str, Any]
    ) -> None: ...

    def segment(
        self,
        name: str,
        scope: AgentScope,
        number: int,
        prompt: str | None,
        summary: str | None,
        metadata: Mapping[str, Any],
    ) -> None: ...

    def imported(
        self,
        alias: str,
        source_ref: str,
        content_hash: str | None,
        requires: Any,
        ensures: Any,
        metadata: Mapping[str, Any],
    ) -> None: ...


@dataclass
class _Row:
    id: int
    status: str
    index: int = 0  # its statement_index (a row without a line of its own: its parent's)
    attempt: int = 1  # the stored retry_attempt
    continued: bool = False  # picked up again by this process (a resume)


@dataclass(kw_only=True)
class StepRecorder:
    """What the interpreter calls at step boundaries (NULL_RECORDER does nothing)."""

    sink: Sink | None
    run_id: str = ""
    sources: Path | None = None  # the run's sources/ (statement text from their lines)
    prefix: str = ""  # a `use`d program's handle path, for its imports' aliases
    _rows: dict[str, _Row] = field(default_factory=dict)
    _pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    _anon: dict[str, str] = field(default_factory=dict)
    _lines: dict[str, list[str]] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def __post_init__(self) -> None:
        if self.sink is None:
            return
        for key, (row, status, index, metadata) in self.sink.rows().items():
            self._rows[key] = _Row(row, status, index, int(metadata.get("retry_attempt", 1)))
        self._anon = dict(self.sink.anonymous())

    def nested(self, handle: str) -> StepRecorder:
        """The recorder of a `use`d program's run (the same rows; imports prefixed)."""
        copy = StepRecorder(sink=None, run_id=self.run_id, sources=self.sources)
        copy.sink, copy.prefix = self.sink, f"{self.prefix}{handle}."
        copy._rows, copy._pending, copy._anon = self._rows, self._pending, self._anon
        copy._lines, copy._lock = self._lines, self._lock
        return copy

    # -- the run ---------------------------------------------------------------------------

    def started(self, *, root_path: str | None, root_source: str | None, entry: str) -> None:
        if self.sink is not None:
            with self._lock:
                metadata = {"kind": "vm", "entry": entry}
                self.sink.run_started(
                    root_path=root_path, root_source=root_source, metadata=metadata
                )

    def ended(self, ok: bool) -> None:
        if self.sink is not None:
            with self._lock:
                self.sink.run_ended(RunStatus.COMPLETED if ok else RunStatus.FAILED)

    # -- executions ------------------------------------------------------------------------

    def _parent(self, key: str) -> str | None:
        for end in range(len(key) - 1, 0, -1):
            if key[end] in _SEPARATORS and key[:end] in self._rows:
                return key[:end]
        return None

    def _text(self, path: str, line: int | None) -> str | None:
        if self.sources is None or not path or not line:
            return None
        if path not in self._lines:
            try:
                text = (self.sources / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            self._lines[path] = text.splitlines()
        lines = self._lines[path]
        return lines[line - 1].strip() if 0 < line <= len(lines) else None

    def enter(
        self,
        key: str,
        kind: str,
        *,
        path: str = "",
        line: int | None = None,
        text: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """A row starts executing (or, on a resume, is continued)."""
        if self.sink is None:
            return
        with self._lock:
            extra = {**(metadata or {}), **self._pending.pop(key, {})}
            found = self._rows.get(key)
            if found is not None:
                if found.status == ExecutionStatus.EXECUTING and not found.continued:
                    found.continued = True  # a cut left it running: this is a retry
                    found.attempt += 1
                    self.sink.annotate(found.id, {**extra, "retry_attempt": found.attempt})
                return
            parent = self._parent(key)
            above = self._rows[parent] if parent is not None else None
            index = line or (above.index if above is not None else 0)
            row = self.sink.begin(
                parent_id=above.id if above is not None else None,
                index=index,
                text=text if text is not None else self._text(path, line),
                metadata={**extra, "key": key, "kind": kind},
            )
            self._rows[key] = _Row(row, ExecutionStatus.EXECUTING, index, continued=True)

    @contextmanager
    def row(
        self,
        key: str,
        kind: str,
        *,
        path: str = "",
        line: int | None = None,
        text: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Iterator[None]:
        """A row around a step: completed when it returns (or returns, breaks or
        continues), failed with the error's text on a ProseError; anything else (a
        crash, a lost store) leaves it executing, for the resume to continue."""
        self.enter(key, kind, path=path, line=line, text=text, metadata=metadata)
        try:
            yield
        except ProseError as error:
            self.leave(key, error=message_of(error.value))
            raise
        except (ReturnSignal, BreakSignal, ContinueSignal):
            self.leave(key)
            raise
        self.leave(key)

    def leave(
        self, key: str, error: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> None:
        """A row ends: completed, or failed with `error` (a final row stays as it is)."""
        if self.sink is None:
            return
        with self._lock:
            found = self._rows.get(key)
            if found is None or found.status != ExecutionStatus.EXECUTING:
                return
            found.status = ExecutionStatus.FAILED if error else ExecutionStatus.COMPLETED
            self.sink.end(found.id, ExecutionStatus(found.status), error, dict(metadata or {}))

    def note(self, key: str, metadata: Mapping[str, Any]) -> None:
        """Merge metadata into a row (one not yet entered gets it when it is)."""
        if self.sink is None:
            return
        with self._lock:
            found = self._rows.get(key)
            if found is None:
                self._pending.setdefault(key, {}).update(metadata)
            elif found.status == ExecutionStatus.EXECUTING:
                self.sink.annotate(found.id, metadata)

    # -- bindings --------------------------------------------------------------------------

    def _scope(self, frame: str | None) -> int | None:
        found = self._rows.get(frame) if frame else None
        return found.id if found is not None else None

    def bind(
        self,
        frame: str | None,
        name: str,
        kind: BindingKind,
        value: Any,
        *,
        key: str | None = None,
        path: str = "",
        line: int | None = None,
        source: str | None = None,
    ) -> None:
        """`name` bound in the frame row `frame` (None or "": the root scope)."""
        if self.sink is None:
            return
        with self._lock:
            source = source or self._text(path, line)
            metadata = {"key": key} if key else {}
            self.sink.binding(name, kind, text_of(value), self._scope(frame), source, metadata)

    def anonymous(
        self,
        frame: str | None,
        key: str,
        value: Any,
        number: int,
        *,
        path: str = "",
        line: int | None = None,
    ) -> None:
        """The value of a bare invocation as `anon_NNN`, `number` its statement's place
        in the program (program.anonymous_positions), in the frame's scope."""
        if self.sink is None:
            return
        with self._lock:
            if key in self._anon:
                return
            name = f"anon_{number:03d}"
            source = self._text(path, line)
            scope = self._scope(frame)
            self.sink.binding(name, BindingKind.LET, text_of(value), scope, source, {"key": key})
            self._anon[key] = name

    # -- agents and imports ----------------------------------------------------------------

    def remember(self, memory: AgentMemory, prompt: str) -> None:
        """A persistent agent's session ended: its memory and the session's segment."""
        if self.sink is None:
            return
        scope = _SCOPES.get(memory.scope, AgentScope.CUSTOM)
        with self._lock:
            self.sink.agent(
                memory.name, scope, _read(memory.memory) or "", {"persist": memory.scope}
            )
            self.sink.segment(
                memory.name,
                scope,
                memory.number,
                prompt or None,
                _read(memory.segment),
                {"run_id": self.run_id},
            )

    def imported(self, alias: str, source: str, program: Program) -> None:
        """A `use` statement: the program it names, resolved, as an `imports` row."""
        if self.sink is None:
            return
        spec = program.imports.get(source)
        digest = requires = ensures = None
        metadata: dict[str, Any] = {}
        if spec is not None:
            nested = program.nested(spec)
            entry = nested.functions.get(nested.entry)
            metadata = {"entry": nested.entry, "target": nested.target}
            if self.sources is not None and (self.sources / nested.target).is_file():
                data = (self.sources / nested.target).read_bytes()
                digest = "sha256:" + hashlib.sha256(data).hexdigest()
            if entry is not None:
                requires = [{"name": n, "description": d} for n, d in entry.parameters]
                ensures = [{"name": n, "description": d} for n, d in entry.returns]
        with self._lock:
            self.sink.imported(f"{self.prefix}{alias}", source, digest, requires, ensures, metadata)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


NULL_RECORDER = StepRecorder(sink=None)
