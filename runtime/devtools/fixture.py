"""Read an upstream devtools state directory (`receipts.json` + `world-models/`), read-only.

The upstream reference writes one global `receipts.json` (every receipt in commit
order) and, per node, `world-models/<hex of the node name>/published.json` and
`versions/sha256_<hex>.bin` (OPWM1 frames). Its `registry.json` may hold no topology,
so the edges are inferred from the receipts: an input fingerprint of a subscriber is
the token of the facet it read, so it names the producer (preferring the producers its
wake refers to) and the facet.
"""

from __future__ import annotations

import binascii
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..protocol import receipt_problem
from ..userjson import JSONInputError, loads, read_limited
from .timeline import TopologyEdge

__all__ = ["FixtureError", "FixtureState", "infer_edges", "is_fixture"]

RECEIPTS_LIMIT = 64 << 20
VERSION_LIMIT = 64 << 20


class FixtureError(ValueError):
    """The directory is not a readable upstream devtools state."""


def is_fixture(path: Path) -> bool:
    """True for a folder holding an upstream `receipts.json` and `world-models/`."""
    return (path / "receipts.json").is_file() and (path / "world-models").is_dir()


class FixtureState:
    """An upstream state directory opened for reading; nothing is ever written."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.receipts = _read_receipts(path / "receipts.json")
        self._folders = _node_folders(path / "world-models")

    def nodes(self) -> list[str]:
        """Every node, in order of its first receipt, then world-model folders by name."""
        seen = dict.fromkeys(str(r["node"]) for r in self.receipts)
        for name in sorted(self._folders):
            seen.setdefault(name, None)
        return list(seen)

    def ledger(self, node: str) -> list[Mapping[str, Any]]:
        return [r for r in self.receipts if r["node"] == node]

    def published_version(self, node: str) -> str | None:
        folder = self._folders.get(node)
        if folder is None or not (folder / "published.json").is_file():
            return None
        try:
            value = loads(read_limited(folder / "published.json", 1 << 20))
        except JSONInputError:
            return None
        version = value.get("version") if isinstance(value, dict) else None
        return version if isinstance(version, str) else None

    def versions(self, node: str) -> list[str]:
        folder = self._folders.get(node)
        if folder is None or not (folder / "versions").is_dir():
            return []
        return sorted(
            "sha256:" + p.stem.removeprefix("sha256_")
            for p in (folder / "versions").glob("sha256_*.bin")
        )

    def get_version(self, node: str, address: str) -> bytes:
        folder = self._folders.get(node)
        digest = address.removeprefix("sha256:")
        if folder is None or not digest.isalnum():
            raise KeyError(address)
        path = folder / "versions" / f"sha256_{digest}.bin"
        if not path.is_file() or path.stat().st_size > VERSION_LIMIT:
            raise KeyError(address)
        return path.read_bytes()


def infer_edges(receipts: Sequence[Mapping[str, Any]]) -> list[TopologyEdge]:
    """The (producer, facet, subscriber) subscriptions the receipts' input fingerprints
    show. Each input slot of a subscriber is matched to the facet tokens other nodes
    held at the time; a token several facets shared narrows down over the receipts (the
    facets that matched at every one of them), and the producers the wake named win."""
    heads: dict[str, Mapping[str, Any]] = {}
    slots: dict[tuple[str, int], set[tuple[str, str]]] = {}
    last: dict[tuple[str, int], set[tuple[str, str]]] = {}
    by_hash = {str(r["content_hash"]): str(r["node"]) for r in receipts}
    for receipt in receipts:
        node = str(receipt["node"])
        referred = {by_hash[r] for r in receipt["wake"].get("refs", []) if r in by_hash}
        for i, value in enumerate(receipt.get("input_fingerprints", [])):
            found = {
                (producer, facet)
                for producer, tokens in heads.items()
                if producer != node
                for facet, token in tokens.items()
                if token == value
            }
            found = {c for c in found if c[0] in referred} or found
            if found:
                key = (node, i)
                last[key] = found
                slots[key] = slots[key] & found if key in slots else found
        if receipt["status"] != "failed":
            heads[node] = receipt.get("fingerprints") or {}
    edges: set[TopologyEdge] = set()
    for key, narrowed in sorted(slots.items()):
        choice = _pick(narrowed or last[key])
        if choice is not None:
            edges.add(TopologyEdge(choice[0], choice[1], key[0]))
    return sorted(edges, key=lambda e: (e.producer, e.subscriber, e.facet))


def _pick(candidates: set[tuple[str, str]]) -> tuple[str, str] | None:
    if len({producer for producer, _ in candidates}) != 1:
        return None  # the same token in two producers says nothing about which one
    # a named facet says more than the whole artifact when both hold the token
    named = sorted(c for c in candidates if c[1] != "@atomic")
    return (named or sorted(candidates))[0]


def _read_receipts(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise FixtureError(f"{path}: no receipts.json")
    try:
        value = loads(read_limited(path, RECEIPTS_LIMIT), source=str(path))
    except JSONInputError as exc:
        raise FixtureError(str(exc)) from None
    if not isinstance(value, list):
        raise FixtureError(f"{path}: not a JSON array of receipts")
    for position, receipt in enumerate(value):
        problem = receipt_problem(receipt)
        if problem is not None:
            raise FixtureError(f"{path}: receipt {position}: {problem}")
    return value


def _node_folders(path: Path) -> dict[str, Path]:
    """world-models/ folders by the node name their hex name spells."""
    folders: dict[str, Path] = {}
    if not path.is_dir():
        return folders
    for folder in sorted(path.iterdir()):
        if not folder.is_dir() or folder.is_symlink():
            continue
        try:
            name = binascii.unhexlify(folder.name).decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        folders[name] = folder
    return folders
