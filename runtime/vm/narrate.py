"""One event stream from the interpreter, two narrations of it.

`VmLog` writes seed 001's markers to `runs/{id}/vm.log.md` (`N→ [input] name ✓`,
`N→ step ✓`, `N→ step ✗ error`, `N→ ∥start a,b` / `Na→ a ✓` / `N→ ∥done`); `InContext`
prints seed 003's compact narration (`N→ name ✓`, `N→ ✓`, `call f(k:v) → name ✓`,
`∥ [a b]` … `∥ [a✓ b✓] done`, `loop:I/M` … `exit`, `#ID name` / `#ID done`, `try→`,
`catch→ err`, `finally→`), nested steps indented two spaces per level. Parallel branches
are buffered and reported in branch order when they join, so the narration is the same
whatever order the renders finished in. `---end` / `---error` close both.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..fsio import append_line, repair_torn_tail

__all__ = ["Event", "InContext", "Recorder", "VmLog"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """kind: input | done | call | fail | parallel | loop | loop-exit | block | block-done |
    try | catch | finally; `branches` holds a parallel's buffered branch events."""

    kind: str
    name: str = ""
    detail: str = ""
    depth: int = 0
    count: int = 0
    limit: int | None = None
    result: str = ""  # a call's binding, for `call f(k:v) → result ✓`
    branches: tuple[tuple[str, tuple[Event, ...], bool], ...] = ()


@dataclass(slots=True)
class Recorder:
    """Collects events (a parallel branch's buffer, or a sink forwarding to narrators)."""

    forward: Callable[[Event], None] | None = None
    events: list[Event] = field(default_factory=list)

    def __call__(self, event: Event) -> None:
        if self.forward is not None:
            self.forward(event)
        else:
            self.events.append(event)


def args_text(args: dict[str, Any]) -> str:
    def short(value: Any) -> str:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
        return text if len(text) <= 40 else text[:37] + "..."

    return ",".join(f"{k}:{short(v)}" for k, v in args.items())


class VmLog:
    """Seed 001 markers appended to vm.log.md; lines a resumed run already wrote (the
    same deterministic prefix) are not written twice."""

    def __init__(self, path: Path) -> None:
        self.path = path
        repair_torn_tail(path)
        lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
        self.existing = [line for line in lines if "→ " in line]
        self.count = 0
        self.written = 0
        self._lock = threading.Lock()

    def line(self, text: str) -> None:
        with self._lock:
            if self.written < len(self.existing) and self.existing[self.written] == text:
                self.written += 1
                return
            self.written = len(self.existing) + 1  # diverged or past the prefix
            append_line(self.path, text.encode("utf-8"))

    def close(self, text: str) -> None:
        append_line(self.path, text.encode("utf-8"))

    def __call__(self, event: Event) -> None:
        if event.kind == "input":
            self.count += 1
            self.line(f"{self.count}→ [input] {event.name} ✓")
        elif event.kind in ("call", "done"):
            self.count += 1
            self.line(f"{self.count}→ {event.name or 'session'} ✓")
        elif event.kind == "fail":
            self.count += 1
            self.line(f"{self.count}→ {event.name} ✗ {event.detail}")
        elif event.kind == "parallel":
            self.count += 1
            n = self.count
            self.line(f"{n}→ ∥start {','.join(name for name, _, _ in event.branches)}")
            for index, (name, _, ok) in enumerate(event.branches):
                letter = _letter(index)
                self.line(f"{n}{letter}→ {name} {'✓' if ok else '✗'}")
            self.line(f"{n}→ ∥done")


def _letter(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters


class InContext:
    """Seed 003 narration, one line at a time through `emit`."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self.emit = emit
        self.count = 0
        self.blocks = 0
        self.stack: list[int] = []

    def start(self) -> None:
        self.emit("OpenProse Run Start")
        self.emit("   State mode: in-context (a single program run, nothing durable)")

    def __call__(self, event: Event) -> None:
        pad = "  " * event.depth
        kind = event.kind
        if kind == "input":
            self.count += 1
            self.emit(f"{pad}{self.count}→ [input] {event.name} ✓")
        elif kind == "done":
            self.count += 1
            self.emit(f"{pad}{self.count}→ {event.name + ' ' if event.name else ''}✓")
        elif kind == "call":
            self.emit(f"{pad}call {event.name}({event.detail}) → {event.result or 'result'} ✓")
        elif kind == "fail":
            self.count += 1
            self.emit(f"{pad}{self.count}→ ✗ {event.detail}")
        elif kind == "parallel":
            names = [name for name, _, _ in event.branches]
            self.emit(f"{pad}∥ [{' '.join(names)}]")
            for _, events, _ in event.branches:
                for inner in events:
                    self(inner)
            marks = [f"{n}{'✓' if ok else '✗'}" for n, _, ok in event.branches]
            for finished in range(1, len(names)):
                progress = marks[:finished] + [f"{n}→" for n in names[finished:]]
                self.emit(f"{pad}∥ [{' '.join(progress)}]")
            self.emit(f"{pad}∥ [{' '.join(marks)}] done")
        elif kind == "loop":
            self.emit(f"{pad}loop:{event.count}{_of(event.limit)}")
        elif kind == "loop-exit":
            cond = f"(**{event.detail}**)" if event.detail else ""
            self.emit(f"{pad}loop:{event.count}{_of(event.limit)} exit{cond}")
        elif kind == "block":
            self.blocks += 1
            self.stack.append(self.blocks)
            self.emit(f"{pad}#{self.blocks} {event.name}({event.detail})")
        elif kind == "block-done":
            self.emit(f"{pad}#{self.stack.pop() if self.stack else 0} done")
        elif kind == "try":
            self.emit(f"{pad}try→")
        elif kind == "catch":
            self.emit(f"{pad}catch→{' ' + event.name if event.name else ''}")
        elif kind == "finally":
            self.emit(f"{pad}finally→")


def _of(limit: int | None) -> str:
    return f"/{limit}" if limit is not None else ""
