"""Execution tracking: the engine's renders as seed 004 `execution` rows.

Each node a run renders or settles is one execution (statement_index: the node's
position in the compiled order, statement_text: its name). A wave of several renders is
a parallel block: a parent row `parallel:` with `{parallel_id, strategy: "all",
branches}` and one child per branch with `{parallel_id, branch}`. A failed render keeps
its error in `error_message`, and every render of a node that failed before in the
same run (a `prosec resume` retrying it) carries `retry_attempt`, the seed's retry
metadata. Only stores with run-state tables (`backend.state`) are written; for the
others the tracker does nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .agents import AgentMemory
from .backends.sqlstate import SqlState
from .protocol import AgentScope, ExecutionStatus, ReceiptStatus

__all__ = ["Tracker"]

_SCOPES = {
    "true": AgentScope.EXECUTION,
    "project": AgentScope.PROJECT,
    "user": AgentScope.USER,
    "path": AgentScope.CUSTOM,
}
_STATUS = {
    ReceiptStatus.RENDERED: ExecutionStatus.COMPLETED,
    ReceiptStatus.SKIPPED: ExecutionStatus.SKIPPED,
    ReceiptStatus.FAILED: ExecutionStatus.FAILED,
}


class Tracker:
    """The execution rows of one run (a no-op without run-state tables)."""

    def __init__(self, state: SqlState | None, run_id: str, index: Mapping[str, int]) -> None:
        self.state = state
        self.run_id = run_id
        self.index = index
        self._rows: dict[str, int] = {}
        self._wave: tuple[int, str] | None = None
        self._outcomes: list[ExecutionStatus] = []

    @contextmanager
    def batch(self) -> Iterator[None]:
        """The rows written inside as one transaction (one commit, not one per row)."""
        if self.state is None:
            yield
            return
        with self.state.db.transaction():
            yield

    def wave(self, nodes: Sequence[str], event: int) -> None:
        """Open the rows of a wave's renders (a parallel block when there are several),
        in one transaction."""
        state = self.state
        if state is None:
            return
        with state.db.transaction():
            self._open_wave(state, nodes, event)

    def _open_wave(self, state: SqlState, nodes: Sequence[str], event: int) -> None:
        self._wave = None
        self._outcomes = []
        parallel = f"p{event}"
        parent = None
        if len(nodes) > 1:
            parent = state.begin_execution(
                self.run_id,
                min(self.index[n] for n in nodes),
                "parallel:",
                metadata={"parallel_id": parallel, "strategy": "all", "branches": list(nodes)},
            )
            self._wave = (parent, parallel)
        for node in nodes:
            metadata: dict[str, Any] = {}
            if parent is not None:
                metadata.update(parallel_id=parallel, branch=node)
            failed = state.failures(self.run_id, self.index[node], node)
            if failed:
                metadata["retry_attempt"] = failed + 1
            self._rows[node] = state.begin_execution(
                self.run_id, self.index[node], node, parent_id=parent, metadata=metadata
            )

    def ended(self, node: str, status: str, receipt: str, diff: Mapping[str, Any]) -> None:
        """A render committed: its row completed, skipped or failed (with the error)."""
        if self.state is None:
            return
        outcome = _STATUS[ReceiptStatus(status)]
        error = None
        if outcome == ExecutionStatus.FAILED:
            reason = str(diff.get("reason", "")).strip()
            error = str(diff.get("error", "failed")) + (f": {reason}" if reason else "")
        self.state.end_execution(
            self._rows.pop(node), outcome, error_message=error, metadata={"receipt": receipt}
        )
        self._outcomes.append(outcome)

    def wave_done(self) -> None:
        if self.state is None or self._wave is None:
            return
        parent, _ = self._wave
        failed = ExecutionStatus.FAILED in self._outcomes
        self.state.end_execution(
            parent,
            ExecutionStatus.FAILED if failed else ExecutionStatus.COMPLETED,
            error_message="a branch failed" if failed else None,
        )
        self._wave = None

    def settled(self, node: str, receipt: str) -> None:
        """A node settled without rendering (its inputs unmoved): one skipped row."""
        if self.state is None:
            return
        row = self.state.begin_execution(self.run_id, self.index[node], node)
        self.state.end_execution(row, ExecutionStatus.SKIPPED, metadata={"receipt": receipt})

    def agent(self, memory: AgentMemory | None) -> None:
        """A node with persistent memory rendered: its memory.md as the `agents` row of
        its scope and the session's segment record as an `agent_segments` row (the
        files stay the agent's own; the rows are the seed 004 projection of them)."""
        if self.state is None or memory is None:
            return
        scope = _SCOPES.get(memory.scope, AgentScope.CUSTOM)
        run_id = self.run_id if scope == AgentScope.EXECUTION else None
        text = _text(memory.memory)
        self.state.put_agent(
            memory.name,
            scope,
            text or "",
            run_id=run_id,
            metadata={"directory": str(memory.directory)},
        )
        self.state.add_segment(
            memory.name,
            scope,
            run_id=run_id,
            prompt=None,
            summary=_text(memory.segment),
            metadata={"run_id": self.run_id},
            number=memory.number,
        )


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
