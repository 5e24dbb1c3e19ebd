"""Incremental wiring: reuse the last build's resolution of every need a change cannot reach.

A need's resolution is a function of the need (its subscriber's source) and of what the
ladder looked up in the producer index. A traced run notes both sides: the table keys
each resolution read, and the keys each node put in the index. After a change, the keys
of the nodes that changed, appeared or went (their old and their new keys) are dirty; a
need is resolved again when its subscriber changed, its `### Emits` wakes changed, or
it read a dirty key, and every other resolution is rebuilt from the memo as it was.

Tracing is complete only without contract templates, pins, pattern expansion or two
nodes of one name; such a project is wired whole every time and keeps no memo. The memo
is a plain JSON document in the build cache; anything in it that is not what `document`
writes makes `decode` refuse it, and the build wires the project whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import orjson

from ...cache_codec import CodecError, decoder, encoder
from ...config import Config
from ...diagnostics import Diagnostic
from ...discover import text_digest
from ...ir import Contract, Edge, Need, Project, Resolution, Rung
from ...lowered import CanonicalizerSpec, Validator
from .index import EmitsEntry, ProducerIndex
from .ladder import Problem

T = TypeVar("T")
_LOWERED = tuple[CanonicalizerSpec, tuple[Diagnostic, ...]]
Stored = dict[str, Any]  # one need's memo: its trace ids, resolution and problems
_RUNGS = {rung.value: rung for rung in Rung}
_STATUSES = frozenset({"wired", "ambiguous", "unsatisfied", "self", "caller"})


class Wiring:
    """The memo of one traced wiring: an interned key table and, per node, its source
    digest, the keys it contributed, its `### Emits` wakes and each need's outcome."""

    def __init__(
        self,
        keys: list[str],
        nodes: dict[str, Stored],
        resolved: int = 0,
        fresh: frozenset[str] = frozenset(),
    ) -> None:
        self.keys = keys
        self.ids = {k: i for i, k in enumerate(keys)}
        self.nodes = nodes
        self.resolved = resolved  # needs the ladder resolved in the run that made it
        self.fresh = fresh  # nodes whose contract changed (or is new) since the last memo
        # kind → nodes whose `derived` value this run took from the memo: what the last
        # build made of the same contract (and wrote, so its output passed validation)
        self.reused: dict[str, set[str]] = {}

    def lowering(
        self, lower: Callable[[Contract], tuple[CanonicalizerSpec, list[Diagnostic]]]
    ) -> Callable[[Contract], tuple[CanonicalizerSpec, list[Diagnostic]]]:
        """`canonicalize.lower`, memoized per node."""

        def lowered(contract: Contract) -> tuple[CanonicalizerSpec, list[Diagnostic]]:
            def compute() -> tuple[CanonicalizerSpec, tuple[Diagnostic, ...]]:
                spec, found = lower(contract)
                return spec, tuple(found)

            spec, found = self.derived("lower", contract.name, _LOWERED, compute)
            return spec, list(found)

        return lowered

    def validators(self) -> Callable[[Contract], Validator]:
        """`postconditions.compile_node`, memoized per node."""
        from .. import postconditions

        def compiled(contract: Contract) -> Validator:
            return self.derived(
                "validator", contract.name, Validator, lambda: postconditions.compile_node(contract)
            )

        return compiled

    def fingerprints(self) -> Callable[[Contract], str]:
        """`fingerprint.fingerprint`, memoized per node."""
        from .. import fingerprint

        def of(contract: Contract) -> str:
            return self.derived(
                "fingerprint", contract.name, str, lambda: fingerprint.fingerprint(contract)
            )

        return of

    def derived(self, kind: str, name: str, hint: Any, compute: Callable[[], T]) -> T:
        """What a per-contract pass (`kind`) makes of node `name`'s contract: the memo's
        when the contract is unchanged, else computed and kept. These passes read the
        contract alone, and an unchanged node's contract is the one the memo saw."""
        node = self.nodes.get(name)
        if node is None:
            return compute()
        kept = node.setdefault("d", {})
        if name not in self.fresh and type(kept.get(kind)) is str:
            try:  # each kind is kept as its own JSON text: parsed when asked, never kept
                found: T = decoder(hint)(orjson.loads(kept[kind]))
            except (CodecError, RecursionError, TypeError, orjson.JSONDecodeError):
                pass
            else:
                self.reused.setdefault(kind, set()).add(name)
                return found
        value = compute()
        try:
            kept[kind] = orjson.dumps(encoder(hint)(value)).decode()
        except (CodecError, RecursionError, TypeError, orjson.JSONEncodeError):
            kept.pop(kind, None)
        return value

    @property
    def needs(self) -> int:
        return sum(len(node["n"]) for node in self.nodes.values())

    def intern(self, found: Sequence[str] | set[str]) -> list[int]:
        ids = []
        for item in found:
            number = self.ids.get(item)
            if number is None:
                number = self.ids[item] = len(self.keys)
                self.keys.append(item)
            ids.append(number)
        return sorted(set(ids))

    def document(self) -> dict[str, Any]:
        """The memo as JSON data, its key table compacted to the keys still referenced
        once a tenth of it is not (until then the few stale keys stay: no need refers to
        them, and a key table entry that matches nothing changes no decision)."""
        used: set[int] = set()
        for node in self.nodes.values():
            used.update(node["k"])
            for need in node["n"]:
                used.update(need["t"])
        if len(used) * 10 >= len(self.keys) * 9:
            return {"keys": self.keys, "nodes": dict(sorted(self.nodes.items()))}
        order = sorted(used)
        renumber = {old: new for new, old in enumerate(order)}
        nodes = {
            name: {
                **node,
                "k": [renumber[i] for i in node["k"]],
                "n": [{**need, "t": [renumber[i] for i in need["t"]]} for need in node["n"]],
            }
            for name, node in sorted(self.nodes.items())
        }
        return {"keys": [self.keys[i] for i in order], "nodes": nodes}


def decode(document: Any) -> Wiring | None:
    """A memo `document` wrote, or None for anything else (the project is wired whole)."""
    try:
        keys, nodes = document["keys"], document["nodes"]
        if (
            type(keys) is not list
            or type(nodes) is not dict
            or document.keys()
            != {
                "keys",
                "nodes",
            }
        ):
            return None
        if not all(type(k) is str for k in keys):
            return None
        limit = len(keys)
        for name, node in nodes.items():
            if not _valid_node(name, node, limit):
                return None
    except (KeyError, TypeError, AttributeError, ValueError):
        return None
    return Wiring(keys, nodes)


def _valid_node(name: Any, node: Any, limit: int) -> bool:
    if type(name) is not str or type(node) is not dict:
        return False
    if not {"file", "line", "k", "m", "n"} <= node.keys() <= {"file", "line", "k", "m", "n", "d"}:
        return False
    derived = node.get("d", {})
    if type(derived) is not dict or not all(type(v) is str for v in derived.values()):
        return False
    if type(node["file"]) is not str or type(node["line"]) is not int:
        return False
    if not _ids(node["k"], limit) or type(node["m"]) is not list or type(node["n"]) is not list:
        return False
    if not all(_strings(pair, 2) for pair in node["m"]):
        return False
    return all(_valid_need(need, limit) for need in node["n"])


def _valid_need(need: Any, limit: int) -> bool:
    if type(need) is not dict or need.keys() != {"t", "r", "p"} or not _ids(need["t"], limit):
        return False
    if type(need["p"]) is not list or not all(type(p) is str for p in need["p"]):
        return False
    r = need["r"]
    if type(r) is not dict or r.keys() != {"s", "g", "e", "c", "x"}:
        return False
    if r["s"] not in _STATUSES or not (r["g"] is None or r["g"] in _RUNGS):
        return False
    if type(r["e"]) is not str or type(r["c"]) is not list or type(r["x"]) is not list:
        return False
    if not all(type(c) is str for c in r["c"]):
        return False
    return all(_strings(e, 4) and e[2] in _RUNGS for e in r["x"])


def _ids(value: Any, limit: int) -> bool:
    return type(value) is list and all(type(i) is int and 0 <= i < limit for i in value)


def _strings(value: Any, length: int) -> bool:
    return type(value) is list and len(value) == length and all(type(v) is str for v in value)


def traceable(project: Project, config: Config, index: ProducerIndex, templated: bool) -> bool:
    """Whether a traced run notes every lookup its resolutions depend on."""
    if templated or config.pins or index.templates:
        return False
    names: set[str] = set()
    for contract in project.contracts:
        if contract.expanded_from is not None:
            return False
        if contract.name in index.producers:
            if contract.name in names:
                return False  # two nodes of one name: the first wins, by path order
            names.add(contract.name)
    return True


def digests(project: Project) -> dict[str, str]:
    """path → sha256 of the source text, for every file of the project."""
    return {f.path: text_digest(f.text) for f in project.files}


def emits_of(entries: Sequence[EmitsEntry]) -> dict[str, list[list[str]]]:
    woken: dict[str, list[list[str]]] = {}
    for entry in entries:
        woken.setdefault(entry.subscriber, []).append([entry.gateway, entry.evidence])
    return woken


class Reuse:
    """What the last memo still answers for this project (nothing when `previous` is None)."""

    def __init__(
        self,
        previous: Wiring | None,
        index: ProducerIndex,
        files: Mapping[str, str],
        woken: Mapping[str, list[list[str]]],
    ) -> None:
        self.memo = previous if previous is not None else Wiring([], {})
        self.index = index
        self.files = files
        self.woken = woken
        contributions = index.contributions or {}
        self.fresh: set[str] = set()  # nodes whose own source changed (or that are new)
        dirty: set[str] = set()
        for name, producer in index.producers.items():
            old = self.memo.nodes.get(name)
            contract = producer.contract
            if (
                old is None
                or old["file"] != files.get(contract.path)
                or old["line"] != contract.span.line
                or len(old["n"]) != len(contract.needs)
            ):
                self.fresh.add(name)
                dirty.update(contributions.get(name, ()))
                if old is not None:
                    dirty.update(self.memo.keys[i] for i in old["k"])
        for name in self.memo.nodes.keys() - index.producers.keys():
            dirty.update(self.memo.keys[i] for i in self.memo.nodes[name]["k"])
        self.dirty = {self.memo.ids[k] for k in dirty if k in self.memo.ids}
        self.resolved = 0
        self.nodes: dict[str, Stored] = {}

    def get(self, name: str, position: int, need: Need) -> tuple[Resolution, list[Problem]] | None:
        """The memo's resolution of this need when nothing it read changed."""
        if name in self.fresh:
            return None
        old = self.memo.nodes[name]
        if old["m"] != self.woken.get(name, []):
            return None
        stored = old["n"][position - 1]
        if not self.dirty.isdisjoint(stored["t"]):
            return None
        self._keep(name, position, stored)
        return _resolution(name, need, stored["r"]), [Problem(p) for p in stored["p"]]

    def put(
        self,
        name: str,
        position: int,
        resolution: Resolution,
        problems: Sequence[Problem],
        trace: Sequence[str],
    ) -> None:
        self.resolved += 1
        stored = {
            "t": self.memo.intern(trace),
            "r": _stored(resolution),
            "p": [p.message for p in problems],
        }
        self._keep(name, position, stored)

    def _keep(self, name: str, position: int, stored: Stored) -> None:
        node = self.nodes.get(name)
        if node is None:
            contract = self.index.producers[name].contract
            contributed = (self.index.contributions or {}).get(name, set())
            node = self.nodes[name] = self._node(name, contract, contributed)
        assert len(node["n"]) == position - 1, "needs are kept in order"
        node["n"].append(stored)

    def result(self) -> Wiring:
        for name, producer in self.index.producers.items():
            if not producer.contract.needs and name not in self.nodes:
                contributed = (self.index.contributions or {}).get(name, set())
                self.nodes[name] = self._node(name, producer.contract, contributed)
        return Wiring(self.memo.keys, self.nodes, self.resolved, frozenset(self.fresh))

    def _node(self, name: str, contract: Contract, contributed: set[str]) -> Stored:
        node: Stored = {
            "file": self.files.get(contract.path, ""),
            "line": contract.span.line,
            "k": self.memo.intern(sorted(contributed)),
            "m": self.woken.get(name, []),
            "n": [],
        }
        old = self.memo.nodes.get(name)
        if old is not None and name not in self.fresh and "d" in old:
            node["d"] = old["d"]  # what the per-contract passes made of it
        return node


def _stored(resolution: Resolution) -> Stored:
    return {
        "s": resolution.status,
        "g": resolution.rung.value if resolution.rung else None,
        "e": resolution.evidence,
        "c": list(resolution.candidates),
        "x": [[e.producer, e.facet, e.rung.value, e.evidence] for e in resolution.edges],
    }


def _resolution(name: str, need: Need, stored: Stored) -> Resolution:
    return Resolution(
        subscriber=name,
        need=need,
        edges=tuple(
            Edge(
                subscriber=name,
                producer=producer,
                facet=facet,
                rung=_RUNGS[rung],
                evidence=evidence,
                need=need,
            )
            for producer, facet, rung, evidence in stored["x"]
        ),
        status=stored["s"],
        candidates=tuple(stored["c"]),
        rung=None if stored["g"] is None else _RUNGS[stored["g"]],
        evidence=stored["e"],
    )
