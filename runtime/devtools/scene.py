"""What the devtools draw: a topology, its layout as SVG, and the receipt timeline.

Two kinds of state open, both read-only: a prosec project (the active compiled intent,
its backend's ledgers, its runs for order and versions) and an upstream devtools state
directory (`receipts.json` + `world-models/`, topology inferred). `Scene` is the plain
data the browser gets; `Inspector` answers the click-through questions (a node's
contract, receipts, published artifact and the diff between two of its versions).
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..backends import BackendError
from ..canonical import FrameError, decode_frame
from ..costs import cost_summary
from ..session import Project
from .fixture import FixtureState, infer_edges
from .layout import layered_layout
from .svg import render_svg
from .timeline import Placed, Step, TopologyEdge, order_receipts, run_positions, steps

__all__ = ["Inspector", "Scene", "fixture_scene", "project_scene"]

TEXT_LIMIT = 256 << 10  # bytes of one artifact file shown as text


@dataclass(frozen=True, slots=True, kw_only=True)
class Scene:
    """Everything the timeline view needs, ready for JSON."""

    kind: str  # "project" or "fixture"
    title: str
    nodes: tuple[Mapping[str, Any], ...]
    edges: tuple[TopologyEdge, ...]
    steps: tuple[Step, ...]
    svg: str
    live: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "title": self.title,
            "live": self.live,
            "nodes": list(self.nodes),
            "edges": [
                {"id": i, "producer": e.producer, "facet": e.facet, "subscriber": e.subscriber}
                for i, e in enumerate(self.edges)
            ],
            "steps": [s.to_json() for s in self.steps],
            "svg": self.svg,
        }


class _Store(Protocol):
    def ledger(self, node: str) -> Sequence[Mapping[str, Any]]: ...

    def get_version(self, node: str, address: str) -> bytes: ...

    def published_version(self, node: str) -> str | None: ...


_drawings: dict[str, str] = {}


def _drawing(nodes: Sequence[Mapping[str, Any]], edges: Sequence[TopologyEdge]) -> str:
    """The SVG of a topology, computed once per distinct topology."""
    key = hashlib.sha256(repr((list(nodes), list(edges))).encode()).hexdigest()
    if key not in _drawings:
        names = [str(n["node"]) for n in nodes]
        layout = layered_layout(names, [(e.producer, e.subscriber) for e in edges])
        kinds = {str(n["node"]): str(n.get("wake_source", "input")) for n in nodes}
        if len(_drawings) > 32:
            _drawings.clear()
        _drawings[key] = render_svg(layout, edges, kinds)
    return _drawings[key]


def project_scene(project: Project, *, live: bool = False) -> Scene:
    """The scene of a prosec project's durable state."""
    intent = project.intent
    nodes = tuple(
        {
            "node": name,
            "wake_source": str(spec.wake_source),
            "facets": list(spec.facets),
            "cadence": project.intent.nodes[name].cadence or project.config.cadence.get(name),
            "entry": name in intent.entry_points,
        }
        for name, spec in sorted(intent.nodes.items())
    )
    edges = tuple(TopologyEdge(e.producer, e.facet, e.subscriber) for e in intent.edges)
    ledgers = {name: project.backend.ledger(name) for name in intent.order}
    placed = order_receipts(ledgers, intent.order, run_positions(project.root / "runs"))
    timeline = _versioned(steps(placed, edges), placed, _run_version(project.root / "runs"))
    return Scene(
        kind="project",
        title=project.root.name,
        nodes=nodes,
        edges=edges,
        steps=tuple(timeline),
        svg=_drawing(nodes, edges),
        live=live,
    )


def fixture_scene(state: FixtureState) -> Scene:
    """The scene of an upstream devtools state directory (its order is the file's)."""
    edges = tuple(infer_edges(state.receipts))
    sources: dict[str, str] = {}
    for receipt in state.receipts:
        sources.setdefault(str(receipt["node"]), str(receipt["wake"]["source"]))
    nodes = tuple(
        {
            "node": name,
            "wake_source": sources.get(name, "input"),
            "facets": sorted({f for r in state.ledger(name) for f in r.get("fingerprints", {})}),
            "cadence": None,
            "entry": sources.get(name) == "external",
        }
        for name in sorted(state.nodes())
    )
    placed = [Placed(r) for r in state.receipts]
    known = {name: set(state.versions(name)) for name in state.nodes()}

    def version(step: Step) -> str | None:
        return step.version if step.version in known.get(step.node, set()) else None

    timeline = [_with_version(s, version(s)) for s in steps(placed, edges)]
    return Scene(
        kind="fixture",
        title=state.path.name,
        nodes=nodes,
        edges=edges,
        steps=tuple(timeline),
        svg=_drawing(nodes, edges),
    )


class Inspector:
    """Click-through answers about one node of a scene's state (read-only)."""

    def __init__(self, scene: Scene, store: _Store, contract: Callable[[str], dict[str, Any]]):
        self.scene = scene
        self.store = store
        self._contract = contract

    def node(self, name: str) -> dict[str, Any] | None:
        info = next((n for n in self.scene.nodes if n["node"] == name), None)
        if info is None:
            return None
        mine = [s for s in self.scene.steps if s.node == name]
        versions = list(dict.fromkeys(s.version for s in mine if s.version))
        published = self.store.published_version(name)
        if published and published not in versions:
            versions.append(published)
        return {
            **info,
            "contract": self._contract(name),
            "inputs": [_edge(e) for e in self.scene.edges if e.subscriber == name],
            "subscribers": [_edge(e) for e in self.scene.edges if e.producer == name],
            "receipts": [s.to_json() for s in mine],
            "published": published,
            "versions": versions,
            "cost": cost_summary(self.store.ledger(name), [name])["total"],
        }

    def artifact(self, name: str, address: str) -> dict[str, str] | None:
        """The files of one version as text (binary files summarized)."""
        try:
            files = decode_frame(self.store.get_version(name, address))
        except (KeyError, OSError, FrameError, ValueError, BackendError):
            return None
        return {path: _text(data) for path, data in sorted(files.items())}

    def diff(self, name: str, old: str, new: str) -> dict[str, Any] | None:
        """A unified diff per file between two versions of a node."""
        before, after = self.artifact(name, old), self.artifact(name, new)
        if before is None or after is None:
            return None
        files = []
        for path in sorted(set(before) | set(after)):
            a, b = before.get(path), after.get(path)
            if a == b:
                continue
            lines = difflib.unified_diff(
                (a or "").splitlines(),
                (b or "").splitlines(),
                fromfile=f"{old[:19]}/{path}" if a is not None else "/dev/null",
                tofile=f"{new[:19]}/{path}" if b is not None else "/dev/null",
                lineterm="",
            )
            change = "added" if a is None else "removed" if b is None else "changed"
            files.append({"path": path, "change": change, "diff": "\n".join(lines) + "\n"})
        return {"node": name, "old": old, "new": new, "files": files}


def project_contract(project: Project) -> Callable[[str], dict[str, Any]]:
    """A node's contract as the compiled intent has it, and its source Markdown."""

    def contract(name: str) -> dict[str, Any]:
        spec = project.intent.nodes[name]
        source = next(
            (s for s in project.intent.raw.get("sources", []) if s.get("name") == name), None
        )
        text = None
        if source is not None:
            path = (project.root / str(source["path"])).resolve()
            if path.is_relative_to(project.root) and path.is_file():
                text = _text(path.read_bytes()[:TEXT_LIMIT])
        return {
            "fingerprint": spec.contract_fingerprint,
            "wake_source": str(spec.wake_source),
            "facets": list(spec.facets),
            "cadence": spec.cadence,
            "caller_inputs": [{"name": c.name, "type": c.type} for c in spec.caller_inputs],
            "postcondition": spec.validator is not None,
            "source": source.get("path") if source else None,
            "text": text,
        }

    return contract


def fixture_contract(state: FixtureState) -> Callable[[str], dict[str, Any]]:
    def contract(name: str) -> dict[str, Any]:
        chain = state.ledger(name)
        return {
            "fingerprint": chain[-1]["contract_fingerprint"] if chain else None,
            "source": None,
            "text": None,
        }

    return contract


def _edge(edge: TopologyEdge) -> dict[str, str]:
    return {"producer": edge.producer, "facet": edge.facet, "subscriber": edge.subscriber}


def _text(data: bytes) -> str:
    if len(data) > TEXT_LIMIT:
        return f"({len(data)} bytes, too large to show)"
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return f"({len(data)} bytes of binary data)"


def _run_version(runs: Path) -> Callable[[str, str], str | None]:
    """The version a run published for a node (its `.version` in the run's world model)."""
    from ..runs import RUN_ID, RunDir

    def version(run_id: str, node: str) -> str | None:
        if not RUN_ID.match(run_id):
            return None
        try:
            return RunDir(runs / run_id).version_of(node)
        except (OSError, ValueError):
            return None

    return version


def _versioned(
    timeline: list[Step], placed: Sequence[Placed], version: Callable[[str, str], str | None]
) -> list[Step]:
    """Steps whose rendered receipt's version is the one its run published."""
    out = []
    for step, item in zip(timeline, placed, strict=True):
        found = version(item.run, step.node) if item.run and step.status == "rendered" else None
        out.append(_with_version(step, found))
    return out


def _with_version(step: Step, version: str | None) -> Step:
    from dataclasses import replace

    return replace(step, version=version)
