"""A review of what changed between two compiled intents: wiring first, fingerprints last.

A snapshot of `dist/manifest.next.json` changes for a reason (an edge moved, a facet was
added, a materiality rule changed) and always also in its contract fingerprints, which
sort before `topology` in the file. A line diff therefore shows a fingerprint first and
the reason, if at all, hunks later. `review` names the reason: added, removed and changed
nodes, wake sources, edges, entry points, facets, canonicalizer rules, postconditions,
diagnostics and sources, and only then the fingerprints that moved with them. Pure: two
JSON values in, lines out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Review", "review"]

_COVERED = {
    "topology",
    "canonicalizers",
    "postconditions",
    "contract_fingerprints",
    "diagnostics",
    "sources",
}


@dataclass(slots=True)
class Review:
    """The changes by section, each a list of `+ added`, `- removed`, `~ changed` lines."""

    sections: dict[str, list[str]] = field(default_factory=dict)

    def add(self, section: str, line: str) -> None:
        self.sections.setdefault(section, []).append(line)

    @property
    def empty(self) -> bool:
        return not self.sections

    def headline(self) -> str:
        """One line: how many changes of which kind (what pytest shows when it truncates)."""
        parts = []
        for section, lines in self.sections.items():
            parts.append(f"{section} {_counts(lines)}")
        return (
            "compiled intent changed: " + "; ".join(parts) if parts else "compiled intent unchanged"
        )

    def lines(self) -> list[str]:
        out = [self.headline()]
        for section, lines in self.sections.items():
            out.append(f"  {section}:")
            out.extend(f"    {line}" for line in lines)
        return out


def _counts(lines: list[str]) -> str:
    names = {"+": "added", "-": "removed", "~": "changed"}
    tally: dict[str, int] = {}
    for line in lines:
        tally[line[:1]] = tally.get(line[:1], 0) + 1
    return ", ".join(f"{tally[mark]} {names[mark]}" for mark in "+-~" if mark in tally)


def review(before: Any, after: Any) -> Review:
    """What changed from `before` (the snapshot) to `after` (the compiled intent now)."""
    result = Review()
    if not isinstance(before, Mapping) or not isinstance(after, Mapping):
        if before != after:
            result.add("document", f"~ {_short_json(before)} → {_short_json(after)}")
        return result
    _nodes(result, _topology(before), _topology(after))
    _edges(result, _topology(before), _topology(after))
    _entry_points(result, _topology(before), _topology(after))
    _canonicalizers(result, _by_node(before, "canonicalizers"), _by_node(after, "canonicalizers"))
    _postconditions(result, _by_node(before, "postconditions"), _by_node(after, "postconditions"))
    _plain_set(
        result,
        "diagnostics",
        _strings(before.get("diagnostics")),
        _strings(after.get("diagnostics")),
    )
    _plain_set(result, "sources", _sources(before), _sources(after))
    for key in sorted({*before, *after} - _COVERED):
        if before.get(key) != after.get(key):
            result.add(
                "other fields",
                f"~ {key}: {_short_json(before.get(key))} → {_short_json(after.get(key))}",
            )
    _fingerprints(result, before, after)
    return result


def _topology(intent: Mapping[str, Any]) -> Mapping[str, Any]:
    value = intent.get("topology")
    return value if isinstance(value, Mapping) else {}


def _items(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _by_node(intent: Mapping[str, Any], key: str) -> dict[str, Mapping[str, Any]]:
    return {str(item.get("node")): item for item in _items(intent.get(key))}


def _strings(value: Any) -> list[str]:
    return [_short_json(item) if not isinstance(item, str) else item for item in value or []]


def _sources(intent: Mapping[str, Any]) -> list[str]:
    return [
        f"{item.get('path')} ({item.get('kind')} `{item.get('name')}`)"
        for item in _items(intent.get("sources"))
    ]


def _nodes(result: Review, before: Mapping[str, Any], after: Mapping[str, Any]) -> None:
    old = {str(n.get("node")): n for n in _items(before.get("nodes"))}
    new = {str(n.get("node")): n for n in _items(after.get("nodes"))}
    for name in sorted(new.keys() - old.keys()):
        result.add("nodes", f"+ {name} (wakes on {new[name].get('wake_source')})")
    for name in sorted(old.keys() - new.keys()):
        result.add("nodes", f"- {name}")
    for name in sorted(old.keys() & new.keys()):
        fields = {*old[name], *new[name]} - {"node", "contract_fingerprint"}
        for key in sorted(fields):
            a, b = old[name].get(key), new[name].get(key)
            if a == b:
                continue
            section = "wake sources" if key == "wake_source" else "nodes"
            result.add(section, f"~ {name} {key}: {_short_json(a)} → {_short_json(b)}")


def _edge(edge: Mapping[str, Any]) -> str:
    return f"{edge.get('producer')}.{edge.get('facet')} → {edge.get('subscriber')}"


def _edges(result: Review, before: Mapping[str, Any], after: Mapping[str, Any]) -> None:
    old = [_edge(e) for e in _items(before.get("edges"))]
    new = [_edge(e) for e in _items(after.get("edges"))]
    _plain_set(result, "edges", old, new)


def _entry_points(result: Review, before: Mapping[str, Any], after: Mapping[str, Any]) -> None:
    _plain_set(
        result,
        "entry points",
        _strings(before.get("entry_points")),
        _strings(after.get("entry_points")),
    )
    if before.get("acyclic") != after.get("acyclic"):
        result.add(
            "topology",
            f"~ acyclic: {_short_json(before.get('acyclic'))} → {_short_json(after.get('acyclic'))}",
        )


def _plain_set(result: Review, section: str, old: Iterable[str], new: Iterable[str]) -> None:
    old_set, new_set = set(old), set(new)
    for item in sorted(new_set - old_set):
        result.add(section, f"+ {item}")
    for item in sorted(old_set - new_set):
        result.add(section, f"- {item}")


def _canonicalizers(
    result: Review, old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]]
) -> None:
    for name in sorted(old.keys() | new.keys()):
        a, b = old.get(name, {}), new.get(name, {})
        _plain_set(
            result,
            "facets",
            (f"{name}.{facet}" for facet in _strings(a.get("facets")) if name in new),
            (f"{name}.{facet}" for facet in _strings(b.get("facets")) if name in old),
        )
        spec_a, spec_b = _mapping(a.get("spec")), _mapping(b.get("spec"))
        if not (name in old and name in new):
            continue  # an added or removed node says it all
        for line in _spec_changes(spec_a, spec_b):
            result.add("canonicalizer rules", f"{line[:2]}{name}: {line[2:]}")
        for key in sorted({*a, *b} - {"node", "facets", "spec"}):
            if a.get(key) != b.get(key):
                result.add(
                    "canonicalizer rules",
                    f"~ {name} {key}: {_short_json(a.get(key))} → {_short_json(b.get(key))}",
                )


def _spec_changes(a: Mapping[str, Any], b: Mapping[str, Any]) -> Iterator[str]:
    if a.get("default_material") != b.get("default_material"):
        yield (
            f"~ default_material: {_short_json(a.get('default_material'))} → "
            f"{_short_json(b.get('default_material'))}"
        )
    old_rules = [_short_json(rule) for rule in a.get("rules") or []]
    new_rules = [_short_json(rule) for rule in b.get("rules") or []]
    for rule in new_rules:
        if rule not in old_rules:
            yield f"+ rule {rule}"
    for rule in old_rules:
        if rule not in new_rules:
            yield f"- rule {rule}"
    if old_rules != new_rules and sorted(old_rules) == sorted(new_rules):
        yield "~ rules reordered (a later rule wins)"
    old_paths = {str(f.get("facet")): f.get("paths") for f in _items(a.get("facets"))}
    new_paths = {str(f.get("facet")): f.get("paths") for f in _items(b.get("facets"))}
    for facet in sorted(old_paths.keys() | new_paths.keys()):
        if old_paths.get(facet) != new_paths.get(facet):
            yield (
                f"~ facet {facet} paths: {_short_json(old_paths.get(facet))} → "
                f"{_short_json(new_paths.get(facet))}"
            )
    for key in sorted({*a, *b} - {"default_material", "rules", "facets"}):
        if a.get(key) != b.get(key):
            yield f"~ {key}: {_short_json(a.get(key))} → {_short_json(b.get(key))}"


def _postconditions(
    result: Review, old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]]
) -> None:
    for name in sorted(old.keys() & new.keys()):
        a, b = old[name], new[name]
        if a == b:
            continue
        va, vb = _mapping(a.get("validator")), _mapping(b.get("validator"))
        if a.get("mode") != b.get("mode"):
            result.add("postconditions", f"~ {name} mode: {a.get('mode')} → {b.get('mode')}")
        for kind in ("predicates", "attested"):
            texts_a = [str(p.get("text", _short_json(p))) for p in _items(va.get(kind))]
            texts_b = [str(p.get("text", _short_json(p))) for p in _items(vb.get(kind))]
            for text in texts_b:
                if text not in texts_a:
                    result.add("postconditions", f"+ {name}: {text}")
            for text in texts_a:
                if text not in texts_b:
                    result.add("postconditions", f"- {name}: {text}")
        if va.get("schema") != vb.get("schema"):
            result.add("postconditions", f"~ {name}: the truth's JSON Schema changed")
        rest = {*a, *b} - {"node", "mode", "validator"}
        for key in sorted(rest):
            if a.get(key) != b.get(key):
                result.add(
                    "postconditions",
                    f"~ {name} {key}: {_short_json(a.get(key))} → {_short_json(b.get(key))}",
                )


def _fingerprints(result: Review, before: Mapping[str, Any], after: Mapping[str, Any]) -> None:
    old = before.get("contract_fingerprints")
    new = after.get("contract_fingerprints")
    old = old if isinstance(old, Mapping) else {}
    new = new if isinstance(new, Mapping) else {}
    section = "contract fingerprints"
    for name in sorted(old.keys() | new.keys()):
        a, b = old.get(name), new.get(name)
        if a == b:
            continue
        if a is None:
            result.add(section, f"+ {name}: {_token(b)}")
        elif b is None:
            result.add(section, f"- {name}: {_token(a)}")
        else:
            result.add(section, f"~ {name}: {_token(a)} → {_token(b)}")
    old_nodes = {
        str(n.get("node")): n.get("contract_fingerprint")
        for n in _items(_topology(before).get("nodes"))
    }
    new_nodes = {
        str(n.get("node")): n.get("contract_fingerprint")
        for n in _items(_topology(after).get("nodes"))
    }
    mismatched = [
        name
        for name in sorted(old_nodes.keys() & new_nodes.keys())
        if old_nodes[name] != new_nodes[name] and old.get(name) == new.get(name)
    ]
    for name in mismatched:  # only when the two copies of a fingerprint disagree
        result.add(
            section, f"~ {name} (topology): {_token(old_nodes[name])} → {_token(new_nodes[name])}"
        )


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _token(value: Any) -> str:
    text = str(value)
    return text[:19] if text.startswith("sha256:") else _short_json(value)


def _short_json(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
