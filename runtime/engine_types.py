"""The engine's value types: progress events, options, a reconcile's summary, a wave's
commit targets and one render job (split out of executor.py, which re-exports them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .protocol import EventKind
from .reconciler import Decision, Wake
from .renders import RenderRequest

if TYPE_CHECKING:
    from .executor import Engine
    from .runs import RunDir

__all__ = ["EngineOptions", "Event", "Job", "RunSummary", "Wave"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """A progress event for reporters (the CLI draws progress from these)."""

    kind: EventKind
    node: str = ""
    detail: str = ""
    total: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineOptions:
    """How to execute: parallelism, default render timeout, hooks."""

    jobs: int = 2
    timeout: float = 600.0
    default_model: str = "unspecified"  # RunConfig.default_model: agent renders' fallback
    checkpoint: Callable[[str, str], None] = lambda point, node: None
    clocked: frozenset[str] = frozenset()  # nodes with a cadence: their renders are timed
    on_event: Callable[[Event], None] = lambda event: None
    # renders elsewhere (runtime/workers/dispatch.py): called with the engine, the run,
    # a wave's jobs and its event number instead of the local thread pool
    dispatch: Callable[[Engine, RunDir, list[Job], int, Wave], None] | None = None


@dataclass(slots=True, kw_only=True)
class RunSummary:
    """What one reconcile did."""

    run_id: str
    rendered: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[tuple[str, str, str]] = field(default_factory=list)
    waves: int = 0


@dataclass(frozen=True, slots=True)
class Wave:
    """What a wave's commits feed: the run's summary and the nodes they wake."""

    summary: RunSummary
    pending: set[str]
    wakes: dict[str, Wake]


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """One render of a wave: the node, why it renders and the versions it reads. A
    render dispatched to workers has no `request` here: its worker prepares it in its
    own run folder (runtime/workers/)."""

    node: str
    decision: Decision
    wake: Wake
    request: RenderRequest | None = None
    pinned: tuple[tuple[str, str], ...] = ()  # (node, version) materializations it reads
    seen: int = 0  # Engine._repairs when it was prepared
