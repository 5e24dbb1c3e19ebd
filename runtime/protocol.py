"""The runtime's protocol vocabulary: the StrEnums and TypedDicts its records are made of.

Defined once here and used everywhere (the compiler takes `WakeSource` from here too).
A StrEnum member is its string: it compares, hashes and serializes (canonical JSON,
json, SQL parameters) exactly as its value, so typing a field changes no byte. Records
read back from disk or a database hold plain strings, equal to the members; compare
with `==` or `in`, never with `is`.

A TypedDict is a static promise only. Where a record comes from disk or a database it
is checked before it is trusted: the `*_problem` functions say why a value is not such
a record (None when it is) and the `is_*` guards narrow it.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, NotRequired, TypedDict, TypeGuard

__all__ = [
    "Action",
    "AgentRow",
    "AgentScope",
    "BindingKind",
    "BindingRow",
    "Cost",
    "EventKind",
    "ExecutionRow",
    "ExecutionStatus",
    "ImportRow",
    "PendingRecord",
    "QueuedWake",
    "Receipt",
    "ReceiptBody",
    "ReceiptStatus",
    "ReceiptWake",
    "RenderWake",
    "RunRow",
    "RunStatus",
    "SegmentRow",
    "SemanticDiff",
    "Signature",
    "SlotKind",
    "Tokens",
    "WakeSource",
    "is_pending_record",
    "is_queued_wake",
    "is_receipt",
    "pending_problem",
    "receipt_problem",
    "wake_problem",
]


class WakeSource(StrEnum):
    """What woke a node: a moved input, its own cadence, or the outside world (upstream's
    three wake sources; a topology node's `wake_source` and a receipt's `wake.source`)."""

    INPUT = "input"
    SELF = "self"
    EXTERNAL = "external"


class ReceiptStatus(StrEnum):
    """How a commit ended: new tokens, unmoved tokens, or a failure (prior tokens kept)."""

    RENDERED = "rendered"
    SKIPPED = "skipped"
    FAILED = "failed"


class Action(StrEnum):
    """The reconciler's decision for a settled node."""

    RENDER = "render"  # run its render
    SKIP = "skip"  # a memo hit with a wake: write a skipped receipt
    DROP = "drop"  # a memo hit without a wake: write nothing


class SlotKind(StrEnum):
    """The kind of one input slot of a node (one position of its input fingerprints)."""

    EDGE = "edge"  # a subscribed (producer, facet)
    CALLER = "caller"  # a caller input bound with --input
    EXTERNAL = "external"  # a gateway's last trigger data


class EventKind(StrEnum):
    """A progress event of the engine (reporters draw from these)."""

    WAVE = "wave"
    START = "start"
    RENDERED = "rendered"
    SKIPPED = "skipped"
    FAILED = "failed"


# ---------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------


class ReceiptWake(TypedDict):
    """A receipt's `wake`: its source and the receipts that caused it."""

    source: WakeSource
    refs: list[str]


class RenderWake(ReceiptWake):
    """The wake a render reads (`__wake.json`): a gateway's trigger data besides."""

    data: NotRequired[Any]


class QueuedWake(TypedDict):
    """A wake queued in the inbox (and recorded in run.json) for a node."""

    node: str
    source: WakeSource
    refs: NotRequired[list[str]]
    data: NotRequired[Any]  # an external wake's trigger data


class Tokens(TypedDict):
    fresh: int
    reused: int


class Cost(TypedDict):
    """What a render cost, and which wake source caused it."""

    model: str
    provider: str
    surprise_cause: WakeSource
    tokens: Tokens


class Signature(TypedDict):
    scheme: str
    null_reason: NotRequired[str]


class SemanticDiff(TypedDict, total=False):
    """`{"changed": [facets]}` rendered, `{}` skipped, `{"error", "reason"}` failed."""

    changed: list[str]
    error: str
    reason: str


class ReceiptBody(TypedDict):
    """A receipt without its `content_hash` (what the hash is computed over)."""

    schema: str
    hash_algorithm: str
    node: str
    prev: str | None
    contract_fingerprint: str
    wake: ReceiptWake
    input_fingerprints: list[str]
    fingerprints: dict[str, str]
    semantic_diff: SemanticDiff
    status: ReceiptStatus
    cost: Cost
    sig: Signature


class Receipt(ReceiptBody):
    """The upstream receipt envelope (schemas/receipt.schema.json)."""

    content_hash: str


class PendingRecord(TypedDict):
    """The write-ahead record of a commit: replaying it finishes the commit."""

    run_id: str
    receipt: Receipt
    version: str | None  # the ContentAddress to publish (rendered only)
    marker: str  # the vm.log.md line


# ---------------------------------------------------------------------------------------
# Run state rows (seed 004's run, execution, bindings, agents, agent_segments, imports;
# the SQL backends' runtime/backends/sqlstate.py reads and writes them)
# ---------------------------------------------------------------------------------------


class RunStatus(StrEnum):
    """A run's lifecycle (seed 004's run.status): running until it ends; a run a crash
    or stop cut is interrupted until `prosec resume` makes it running again."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


class ExecutionStatus(StrEnum):
    PENDING = "pending"
    EXECUTING = "executing"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"


class BindingKind(StrEnum):
    INPUT = "input"
    OUTPUT = "output"
    LET = "let"
    CONST = "const"


class AgentScope(StrEnum):
    """Where an agent's memory lives: one run (execution), every run of the project,
    every project of the user, or a custom path."""

    EXECUTION = "execution"
    PROJECT = "project"
    USER = "user"
    CUSTOM = "custom"


class RunRow(TypedDict):
    id: str
    root_path: str | None
    root_source: str | None
    status: str
    state_mode: str
    started_at: str
    updated_at: str
    metadata: dict[str, Any]


class ExecutionRow(TypedDict):
    id: int
    run_id: str
    statement_index: int
    statement_text: str | None
    status: str
    started_at: str | None
    completed_at: str | None
    error_message: str | None
    parent_id: int | None
    metadata: dict[str, Any]


class BindingRow(TypedDict):
    name: str
    run_id: str
    execution_id: int | None
    binding: str
    value: str | None
    source_statement: str | None
    attachment_path: str | None
    metadata: dict[str, Any]


class AgentRow(TypedDict):
    name: str
    run_id: str | None
    scope: str
    memory: str | None
    metadata: dict[str, Any]


class SegmentRow(TypedDict):
    agent_name: str
    run_id: str | None
    segment_number: int
    prompt: str | None
    summary: str | None
    metadata: dict[str, Any]


class ImportRow(TypedDict):
    alias: str
    run_id: str
    source_ref: str
    content_hash: str | None
    requires_schema: Any
    ensures_schema: Any
    metadata: dict[str, Any]


# ---------------------------------------------------------------------------------------
# Checks for records read back from storage
# ---------------------------------------------------------------------------------------

# tuples compare by equality, so an unhashable value is simply not a member
_STATUSES = tuple(ReceiptStatus)
_SOURCES = tuple(WakeSource)
_MISSING = object()
_RECEIPT_FIELDS: tuple[tuple[str, type | tuple[type, ...]], ...] = (
    ("schema", str),
    ("hash_algorithm", str),
    ("content_hash", str),
    ("prev", (str, type(None))),
    ("node", str),
    ("contract_fingerprint", str),
    ("wake", dict),
    ("input_fingerprints", list),
    ("fingerprints", dict),
    ("semantic_diff", dict),
    ("status", str),
    ("cost", dict),
    ("sig", dict),
)


def receipt_problem(value: object) -> str | None:
    """Why `value` is not a receipt the runtime can use (None when it is): every envelope
    field present with its JSON type, a known status and wake source."""
    if not isinstance(value, Mapping):
        return "not a JSON object"
    for name, kind in _RECEIPT_FIELDS:
        if not isinstance(value.get(name, _MISSING), kind):
            return f"`{name}` is not {_json_type(kind)}" if name in value else f"no `{name}`"
    if value["status"] not in _STATUSES:
        return f"status {value['status']!r} is not one of {', '.join(ReceiptStatus)}"
    return _wake_source_problem(value["wake"], "wake.source") or _refs_problem(
        value["wake"], "wake.refs", required=True
    )


def is_receipt(value: object) -> TypeGuard[Receipt]:
    return receipt_problem(value) is None


def wake_problem(value: object) -> str | None:
    """Why `value` is not a queued wake (None when it is)."""
    if not isinstance(value, Mapping):
        return "not a JSON object"
    if not isinstance(value.get("node"), str):
        return "no `node` name"
    return _wake_source_problem(value, "source") or _refs_problem(value, "refs", required=False)


def is_queued_wake(value: object) -> TypeGuard[QueuedWake]:
    return wake_problem(value) is None


def pending_problem(value: object) -> str | None:
    """Why `value` is not a commit's write-ahead record (None when it is)."""
    if not isinstance(value, Mapping):
        return "not a JSON object"
    if not isinstance(value.get("run_id"), str):
        return "no `run_id`"
    if not isinstance(value.get("marker"), str):
        return "no `marker`"
    if not isinstance(value.get("version", False), (str, type(None))):
        return "`version` is neither a content address nor null"
    problem = receipt_problem(value.get("receipt"))
    return None if problem is None else f"receipt: {problem}"


def is_pending_record(value: object) -> TypeGuard[PendingRecord]:
    return pending_problem(value) is None


def _wake_source_problem(wake: Mapping[str, Any], where: str) -> str | None:
    source = wake.get("source")
    if source not in _SOURCES:
        return f"{where} {source!r} is not one of {', '.join(WakeSource)}"
    return None


def _refs_problem(wake: Mapping[str, Any], where: str, *, required: bool) -> str | None:
    if "refs" not in wake and not required:
        return None
    refs = wake.get("refs")
    if not isinstance(refs, list) or not all(isinstance(ref, str) for ref in refs):
        return f"`{where}` is not a list of strings"
    return None


def _json_type(kind: type | tuple[type, ...]) -> str:
    names = {str: "a string", list: "an array", dict: "an object", type(None): "null"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)
