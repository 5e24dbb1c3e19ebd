"""Commit-and-sign: judge a render's artifact and store its receipt crash-safely.

Order (each step idempotent, so `recover()` can roll a cut commit forward):

1. read the staging folder → OPWM1 frame and ContentAddress; structured truth;
   canonicalizer → FingerprintMap; postcondition validator + attestations;
2. compare with the node's current tokens → rendered / skipped (or failed);
3. store the version blob (content-addressed, harmless if orphaned);
4. write the pending record (the full receipt: the write-ahead log);
5. append the receipt to the durable ledger — the commit point;
6. append it to the run ledger; publish world-model (durable and run) with `.version`;
7. append the vm.log.md marker; drop the pending record.

Checkpoints (crash points for tests): after-version, after-pending, after-ledger,
after-run-ledger, after-publish, after-log (the executor adds after-render).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from .backends.base import Backend
from .canonical import content_address, encode_frame
from .canonicalizer import fingerprint
from .fsio import PathEscapeError, read_tree
from .intent import NodeIntent
from .postconditions import check, read_attestation
from .protocol import Cost, PendingRecord, Receipt, ReceiptStatus, SemanticDiff, WakeSource
from .receipts import build_receipt
from .reconciler import NodeHead, Wake, moved_facets
from .renders import RenderOutcome
from .runs import RunDir
from .truth import build_truth

__all__ = ["commit_and_sign", "evaluate", "failed", "render_cost", "skipped"]


def skipped(
    node: str,
    head: NodeHead,
    memo: tuple[str, tuple[str, ...]],
    wake: Wake,
    facets: Iterable[str],
) -> Receipt:
    """The receipt of a wake the reconciler answered without rendering: the head's
    tokens again, under the decision's contract and input fingerprints (`memo`)."""
    return build_receipt(
        node=node,
        prev=head.hash,
        contract_fingerprint=memo[0],
        wake_source=wake.source,
        wake_refs=wake.refs,
        input_fingerprints=memo[1],
        fingerprints=head.fingerprints(facets),
        status=ReceiptStatus.SKIPPED,
    )


def render_cost(outcome: RenderOutcome, provider: str, cause: WakeSource) -> Cost:
    """The receipt's `cost`: what the render reported (model, provider, tokens), the
    binding's provider where it named none, and the wake source as the surprise cause."""
    given = dict(outcome.cost or {})
    tokens = given.get("tokens") if isinstance(given.get("tokens"), dict) else {}
    return {
        "model": str(given.get("model", "none")),
        "provider": str(given.get("provider", provider)),
        "surprise_cause": cause,
        "tokens": {
            "fresh": int(tokens.get("fresh", 0)) if tokens else 0,
            "reused": int(tokens.get("reused", 0)) if tokens else 0,
        },
    }


def evaluate(
    spec: NodeIntent, head: NodeHead, run: RunDir, outcome: RenderOutcome, staging: Path
) -> tuple[ReceiptStatus, dict[str, str], dict[str, bytes] | None, SemanticDiff]:
    """Judge a finished render attempt whose artifact is in `staging`: status,
    fingerprints, files to publish (rendered only) and semantic_diff. A render failure,
    `__error.md`, a bad `__attest.json`, an unreadable artifact, a postcondition violation
    or a missing attestation is `failed` (prior tokens kept); unmoved tokens are
    `skipped`."""
    node = spec.name
    prior = head.fingerprints(spec.facets)
    workspace = run.workspace(node)
    if outcome.ok and workspace.is_symlink():
        detail = "the workspace was replaced by a symlink"
        outcome = RenderOutcome(ok=False, error="invalid-signal", detail=detail)
    if outcome.ok:
        outcome = _error_signal(workspace / "__error.md") or outcome
    if not outcome.ok:
        return failed(spec, head, outcome)
    try:
        _refuse_links(run.path, staging)
        files = read_tree(staging)
        content_address(files)  # every path must normalize and encode
        truth = build_truth(files)
    except (ValueError, PathEscapeError) as exc:  # TruthError, PathError, bad encodings
        return ReceiptStatus.FAILED, prior, None, _failure("invalid-artifact", str(exc))
    except RecursionError:  # pragma: no cover - build_truth bounds every depth
        return ReceiptStatus.FAILED, prior, None, _failure("invalid-artifact", "nested too deep")
    tokens = fingerprint(spec.spec, truth.value, spec.facets, finite=True)
    attested, problem = read_attestation(workspace)
    if problem is not None:
        return ReceiptStatus.FAILED, prior, None, _failure("invalid-attestation", problem)
    violations = check(spec.validator, truth.value, attested)
    if violations:
        kinds = {v.kind for v in violations}
        name = "missing-attestation" if kinds == {"attestation"} else "postcondition"
        reason = "; ".join(str(v) for v in violations)
        return ReceiptStatus.FAILED, prior, None, _failure(name, reason)
    moved = moved_facets(prior, tokens, spec.facets)
    if not moved:
        return ReceiptStatus.SKIPPED, tokens, None, {}
    return ReceiptStatus.RENDERED, tokens, files, {"changed": moved}


def failed(
    spec: NodeIntent, head: NodeHead, outcome: RenderOutcome
) -> tuple[ReceiptStatus, dict[str, str], None, SemanticDiff]:
    """The verdict on a render that failed (or never ran): `failed`, prior tokens kept."""
    prior = head.fingerprints(spec.facets)
    return ReceiptStatus.FAILED, prior, None, _failure(outcome.error or "error", outcome.detail)


def _refuse_links(run_path: Path, staging: Path) -> None:
    """The staging folder and the folders above it inside the run must be real folders:
    a render that swaps one for a symlink must not publish what the link points at."""
    folder = staging
    while folder != run_path and run_path in folder.parents:
        if folder.is_symlink():
            raise PathEscapeError(f"{folder} was replaced by a symlink; artifacts may not link")
        folder = folder.parent


def commit_and_sign(
    backend: Backend,
    run: RunDir,
    node: str,
    receipt: Receipt,
    files: dict[str, bytes] | None,
    marker: str,
    checkpoint: Callable[[str, str], None],
) -> str | None:
    """Store, log and publish one receipt in crash-safe order; return the new version."""
    address = None
    if files is not None:
        frame = encode_frame(files)
        address = content_address(files)
        backend.put_version(node, address, frame, run_id=run.run_id)
        checkpoint("after-version", node)
    record: PendingRecord = {
        "run_id": run.run_id,
        "receipt": receipt,
        "version": address,
        "marker": marker,
    }
    backend.put_pending(node, record)
    checkpoint("after-pending", node)
    backend.append_receipt(run.run_id, receipt)
    checkpoint("after-ledger", node)
    run.append_receipt(node, receipt)
    checkpoint("after-run-ledger", node)
    if files is not None and address is not None:
        backend.set_published(node, address, files)
        run.materialize(node, address, files)
        checkpoint("after-publish", node)
    run.log(marker)
    checkpoint("after-log", node)
    backend.clear_pending(node)
    return address


def _failure(name: str, reason: str) -> SemanticDiff:
    return {"error": name, "reason": reason[:2000]}


_ERROR_LIMIT = 4096  # the name is on the first line; the rest is the render's to read


def _error_signal(path: Path) -> RenderOutcome | None:
    """The failure `__error.md` signals, if the render wrote one (None when absent)."""
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink() or not path.is_file():
        detail = "__error.md is not a plain file"
        return RenderOutcome(ok=False, error="invalid-signal", detail=detail)
    try:
        with open(path, "rb") as handle:
            head = handle.read(_ERROR_LIMIT)
    except OSError as exc:
        detail = f"__error.md cannot be read: {exc.strerror or exc}"
        return RenderOutcome(ok=False, error="invalid-signal", detail=detail)
    return RenderOutcome(ok=False, error=_error_name(head), detail="__error.md")


def _error_name(head: bytes) -> str:
    """`# Error: no-results` → `no-results` (the seed's __error.md convention)."""
    for line in head.decode("utf-8", errors="replace").splitlines():
        text = line.strip().lstrip("#").strip()
        if text.lower().startswith("error:"):
            name = "-".join(text[6:].split()).lower()
            return name[:60] or "error"
        if text:
            break
    return "error"
