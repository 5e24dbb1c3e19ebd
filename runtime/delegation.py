"""Runtime delegation: a render yields to a delegate and is resumed with its response.

The protocol (upstream `prose.md`, "Runtime Delegation"; seed 001's markers):

1. A render yields by writing one request per delegate call,
   `workspace/{node}/__delegate/{delegate}/{id}.md`, and ending normally (exit 0, or a
   python render returning). A request without `{id}-response.md` beside it is pending;
   a render that ends with none pending is done.
2. The runtime checks each delegate is one the node's `### Shape` lists (else the render
   fails with `delegate-undeclared`), logs `N→ node ⇒ delegate (delegate: id)` for each,
   and runs the delegates (concurrently, at most `jobs` at a time) through their
   configured renders (`[render.<delegate>]`, `--render delegate=…`, `--render '*=…'`,
   `[render.default]`). A delegate is an independent session: its workspace is
   `__delegate/{delegate}/{id}.session/`, its `PROSEC_WAKE` file says
   `{"source": "delegation", "from": node, "id": id, "request": path}`, it has no
   inputs, no prior truth and no memory, and it writes its answer to its output folder.
3. The runtime writes `{id}-response.md` (the delegate's one output file as is; several
   files, each under a `## path` heading) and logs `N→ delegate ✓` (in request order),
   then `N→ node ⟳ (resumed)`, and invokes the render again, with the same output folder
   and memory: the same session. An agent's prompt then lists each response.
4. A delegate that fails (or publishes nothing) fails the render (`delegate-failed`,
   marker `N→ delegate ✗ error`). A render that still yields after 16 rounds fails with
   `delegation-loop`.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .fsio import PathEscapeError, atomic_write_bytes, disk_full, read_tree, safe_name
from .renders import Renderer, RenderOutcome, RenderRequest
from .userjson import JSONInputError, read_limited

__all__ = ["DELEGATE_DIR", "MAX_ROUNDS", "Delegates", "Request", "pending", "render_delegating"]

DELEGATE_DIR = "__delegate"
MAX_ROUNDS = 16
MAX_REQUESTS = 64  # pending requests in one yield
REQUEST_LIMIT = 16 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """One pending delegation: the delegate, the caller-chosen id and the request file."""

    delegate: str
    id: str
    path: Path

    @property
    def response(self) -> Path:
        return self.path.with_name(f"{self.id}-response.md")


@dataclass(frozen=True, slots=True, kw_only=True)
class Delegates:
    """The delegates' renders, and why a declared delegate has none (its binding error)."""

    renderers: Mapping[str, Renderer]
    unbound: Mapping[str, str]


def pending(workspace: Path) -> tuple[list[Request], str | None]:
    """The requests without a response, in (delegate, id) order, and a problem with the
    folder if there is one (a symlink, an unsafe name, too many requests)."""
    base = workspace / DELEGATE_DIR
    if base.is_symlink():
        return [], f"{base} is a symlink"
    if not base.is_dir():
        return [], None
    found: list[Request] = []
    for folder in sorted(base.iterdir()):
        if folder.is_symlink() or not folder.is_dir():
            return [], f"{folder} is not a folder"
        for entry in sorted(folder.iterdir()):
            name = entry.name
            if not name.endswith(".md") or name.endswith("-response.md"):
                continue
            if entry.is_symlink() or not entry.is_file():
                return [], f"{entry} is not a plain file"
            request = Request(delegate=folder.name, id=name.removesuffix(".md"), path=entry)
            if not request.response.exists() and not request.response.is_symlink():
                found.append(request)
    if len(found) > MAX_REQUESTS:
        return [], f"{len(found)} pending requests (at most {MAX_REQUESTS} at a time)"
    return found, None


def render_delegating(
    renderer: Renderer,
    request: RenderRequest,
    *,
    allowed: Sequence[str],
    delegates: Delegates,
    contracts: Mapping[str, Path],
    log: Callable[[str], None],
    label: str,
    jobs: int,
) -> RenderOutcome:
    """Render, serving the delegations the render yields to, until it is done."""
    outcome = renderer.render(request)
    for _ in range(MAX_ROUNDS):
        if not outcome.ok or (request.workspace / "__error.md").exists():
            return outcome
        requests, problem = pending(request.workspace)
        if problem is not None:
            return RenderOutcome(ok=False, error="invalid-delegation", detail=problem)
        if not requests:
            return outcome
        for item in requests:
            if item.delegate not in allowed:
                listed = ", ".join(allowed) or "none"
                return RenderOutcome(
                    ok=False,
                    error="delegate-undeclared",
                    detail=f"{request.node} delegated to {item.delegate!r}, which its "
                    f"### Shape does not list among its delegates ({listed})",
                )
            if item.delegate in delegates.unbound:
                return RenderOutcome(
                    ok=False, error="delegate-unbound", detail=delegates.unbound[item.delegate]
                )
        for item in requests:
            log(f"{label}→ {request.node} ⇒ {item.delegate} (delegate: {item.id})")
        failure = _serve(request, requests, delegates, contracts, jobs)
        for item, (ok, error) in zip(requests, failure.results, strict=True):
            log(f"{label}→ {item.delegate} ✓" if ok else f"{label}→ {item.delegate} ✗ {error}")
        if failure.outcome is not None:
            return failure.outcome
        log(f"{label}→ {request.node} ⟳ (resumed)")
        outcome = renderer.render(request)
    return RenderOutcome(
        ok=False,
        error="delegation-loop",
        detail=f"{request.node} still yielded after {MAX_ROUNDS} rounds of delegation",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Served:
    results: list[tuple[bool, str]]
    outcome: RenderOutcome | None  # the first failure, as the delegating render's


def _serve(
    request: RenderRequest,
    requests: list[Request],
    delegates: Delegates,
    contracts: Mapping[str, Path],
    jobs: int,
) -> _Served:
    with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        outcomes = list(
            pool.map(
                lambda item: _delegate(
                    request, item, delegates.renderers[item.delegate], contracts
                ),
                requests,
            )
        )
    results = [(outcome.ok, outcome.error or "") for outcome in outcomes]
    for item, outcome in zip(requests, outcomes, strict=True):
        if not outcome.ok:
            detail = (
                f"delegate {item.delegate} ({item.id}) failed: {outcome.error}: {outcome.detail}"
            )
            return _Served(
                results=results,
                outcome=RenderOutcome(ok=False, error="delegate-failed", detail=detail),
            )
    return _Served(results=results, outcome=None)


def _delegate(
    caller: RenderRequest, item: Request, renderer: Renderer, contracts: Mapping[str, Path]
) -> RenderOutcome:
    """Run one delegate session and write its response; its outcome."""
    try:
        safe_name(item.delegate, "delegate name")
        safe_name(item.id, "delegation id")
        text = read_limited(item.path, REQUEST_LIMIT, what="")
    except (PathEscapeError, JSONInputError) as exc:
        return RenderOutcome(ok=False, error="invalid-delegation", detail=str(exc))
    del text  # read only to refuse what cannot be a request; the delegate reads the file
    workspace = item.path.with_name(f"{item.id}.session")
    if workspace.is_symlink() or (workspace.exists() and not workspace.is_dir()):
        workspace.unlink()
    workspace.mkdir(parents=True, exist_ok=True)
    output = workspace / "output"
    if output.is_symlink() or output.exists():
        return RenderOutcome(ok=False, error="invalid-delegation", detail=f"{output} exists")
    output.mkdir()
    wake = {"source": "delegation", "from": caller.node, "id": item.id, "request": str(item.path)}
    inputs = {
        "run_id": caller.run_id,
        "node": item.delegate,
        "inputs": [],
        "caller": [],
        "prior": {"version": None, "path": None},
        "wake": wake,
        "delegation": {"from": caller.node, "id": item.id, "request": str(item.path)},
    }
    inputs_file = workspace / "__inputs.json"
    wake_file = workspace / "__wake.json"
    atomic_write_bytes(
        inputs_file, json.dumps(inputs, indent=2, sort_keys=True).encode(), durable=False
    )
    atomic_write_bytes(
        wake_file, json.dumps(wake, indent=2, sort_keys=True).encode(), durable=False
    )
    session = replace(
        caller,
        node=item.delegate,
        workspace=workspace,
        output=output,
        inputs_file=inputs_file,
        wake_file=wake_file,
        attest_file=workspace / "__attest.json",
        prior=None,
        prior_version=None,
        contract=contracts.get(item.delegate),
        wake=wake,
        attested=(),
        attempt=f"{caller.attempt}-{item.delegate}-{item.id}",
        memory=None,
        model=None,
    )
    try:
        outcome = renderer.render(session)
    except Exception as exc:  # a render plug-in bug must not take the runner down
        if disk_full(exc):  # but a full disk is no outcome of the render: exit 2, resume
            raise
        return RenderOutcome(ok=False, error="exception", detail=f"{type(exc).__name__}: {exc}")
    if outcome.ok and (workspace / "__error.md").is_file():
        head = (workspace / "__error.md").read_bytes()[:200].decode("utf-8", "replace")
        name = head.splitlines()[0].removeprefix("# Error:").strip() if head else "error"
        return RenderOutcome(ok=False, error=name or "error", detail="__error.md")
    if not outcome.ok:
        return outcome
    try:
        files = read_tree(output)
    except (PathEscapeError, OSError) as exc:
        return RenderOutcome(ok=False, error="invalid-artifact", detail=str(exc))
    if not files:
        return RenderOutcome(ok=False, error="no-response", detail=f"{output} is empty")
    atomic_write_bytes(item.response, _response(files))
    return outcome


def _response(files: Mapping[str, bytes]) -> bytes:
    if len(files) == 1:
        return next(iter(files.values()))
    parts = []
    for path in sorted(files):
        body = files[path].decode("utf-8", "replace").rstrip("\n")
        parts.append(f"## {path}\n\n{body}\n")
    return "\n".join(parts).encode("utf-8")
