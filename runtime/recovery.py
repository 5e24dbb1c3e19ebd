"""Recovery after an interrupted runner: what `Project.recover` does under the runner
lock before anything runs.

A runner killed mid-run may leave renders still running, half-built run folders, temp
files of interrupted atomic writes, a claimed inbox batch and pending commits (a
receipt, its version and its vm.log marker, written in that order). `recover` kills the
survivors, removes the leftovers, rolls every pending commit forward (or discards it
when another commit superseded it) and marks the runs the store still has `running`
as interrupted.
"""

from __future__ import annotations

from pathlib import Path

from .backends import Backend, BackendError
from .canonical import decode_frame
from .fsio import remove_leftovers, repair_torn_tail
from .inbox import recover_claim
from .intent import remember_checked
from .protocol import is_pending_record, pending_problem
from .renders.process import kill_survivors
from .runs import RunDir, remove_unbuilt

__all__ = ["recover"]


def recover(
    root: Path, backend: Backend, warnings: list[str], *, manifest: Path, cache: Path
) -> list[str]:
    """Kill renders an interrupted runner left running, then roll forward commits a crash
    interrupted; returns the nodes recovered (warnings appended to `warnings`)."""
    if not backend.ephemeral:
        remember_checked(manifest, cache)
        for survivor in kill_survivors(root / "runs"):
            warnings.append(f"killed a render an interrupted runner left: {survivor}")
        remove_unbuilt(root / "runs")
        if backend.name == "filesystem":  # its state/ folder is ours under the lock
            remove_leftovers(root / "state")
        recover_claim(backend, root / "runs")
    warnings.extend(backend.repair())
    recovered = []
    for node, record in backend.pendings().items():
        if not is_pending_record(record):
            problem = pending_problem(record)
            raise BackendError(f"the pending commit of {node!r} is malformed: {problem}")
        receipt = record["receipt"]
        head = backend.ledger(node)
        head_hash = head[-1]["content_hash"] if head else None
        if head_hash == receipt["prev"]:
            backend.append_receipt(record["run_id"], receipt)
        elif head_hash != receipt["content_hash"]:
            warnings.append(f"discarded a stale pending commit of {node!r}")
            backend.clear_pending(node)
            continue
        run_path = root / "runs" / record["run_id"]
        run = RunDir(run_path) if run_path.is_dir() else None
        if run is not None:
            repair_torn_tail(run.ledger(node))
            repair_torn_tail(run.path / "vm.log.md")
            run.append_receipt(node, receipt)
        version = record["version"]
        if version:
            files = decode_frame(backend.get_version(node, version))
            backend.set_published(node, version, files)
            if run is not None:
                run.materialize(node, version, files)
        if run is not None and record["marker"] not in run.log_lines():
            run.log(record["marker"])
        backend.clear_pending(node)
        recovered.append(node)
    if backend.run_state is not None:
        # under the lock nothing else runs: a run still `running` was cut (closed after
        # the roll-forward, so a commit it had made counts as done)
        backend.run_state.interrupt_running()
    return recovered
