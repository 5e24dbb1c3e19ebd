"""A render job: what a worker needs to render one node exactly as the runner decided.

The payload is plain JSON (procrastinate stores it as the job's arguments): the run, the
node, the head it must extend (`prev`), its memo (contract and input fingerprints), its
wake, the versions it reads (pinned by content address), the label of its vm.log.md
marker and the digest of the compiled intent it was decided against. Its key is the node
and a token of the memo and `prev`: the same render enqueued twice is one job
(procrastinate's queueing lock), and two jobs of one key never run at once (its lock).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..canonical import token
from ..protocol import Action
from ..reconciler import Decision, Wake

__all__ = ["RenderJob", "intent_token"]


def intent_token(raw: Any) -> str:
    """The token of a compiled intent: a worker renders only for the one it holds."""
    return token(raw)


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderJob:
    run_id: str
    node: str
    prev: str | None
    contract: str
    inputs: tuple[str, ...]
    wake_source: str
    wake_refs: tuple[str, ...]
    pinned: tuple[tuple[str, str], ...]
    label: str
    intent: str
    timeout: float
    default_model: str

    @property
    def key(self) -> str:
        memo = token({"contract": self.contract, "inputs": list(self.inputs), "prev": self.prev})
        return f"prosec:{self.node}:{memo.removeprefix('sha256:')[:32]}"

    def decision(self) -> Decision:
        return Decision(
            action=Action.RENDER, reason="rendered by a worker", memo=(self.contract, self.inputs)
        )

    def wake(self) -> Wake:
        return Wake(source=self.wake_source, refs=self.wake_refs)

    def payload(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "node": self.node,
            "prev": self.prev,
            "contract": self.contract,
            "inputs": list(self.inputs),
            "wake": {"source": self.wake_source, "refs": sorted(self.wake_refs)},
            "pinned": [list(pair) for pair in self.pinned],
            "label": self.label,
            "intent": self.intent,
            "timeout": self.timeout,
            "default_model": self.default_model,
        }

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> RenderJob:
        return cls(
            run_id=str(data["run_id"]),
            node=str(data["node"]),
            prev=None if data["prev"] is None else str(data["prev"]),
            contract=str(data["contract"]),
            inputs=tuple(str(item) for item in data["inputs"]),
            wake_source=str(data["wake"]["source"]),
            wake_refs=tuple(str(ref) for ref in data["wake"]["refs"]),
            pinned=tuple((str(a), str(b)) for a, b in data["pinned"]),
            label=str(data["label"]),
            intent=str(data["intent"]),
            timeout=float(data["timeout"]),
            default_model=str(data["default_model"]),
        )
