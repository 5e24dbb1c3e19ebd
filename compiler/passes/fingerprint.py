"""Contract fingerprints: sha256 over the RFC 8785 JSON of a normalized contract image.

The image keeps what the contract means (identity, kind, needs, the Maintains schema
with its facets, continuity, execution, postconditions, runtime hints) and drops how it is laid out:
whitespace is collapsed, item styles and list indentation are forgotten, prose sections
that do not bind the render (title, description) are left out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prosec.runtime.canonical import token

from ..frozen import thaw
from ..ir import Body, Contract, Item, Topology
from ..runtime_hints import lower as runtime_hints
from . import postconditions

SCHEME = "prosec.contract/1"


def run(topology: Topology, of: Callable[[Contract], str] | None = None) -> dict[str, str]:
    """node → contract fingerprint, for every topology node (`of`: a memoized
    `fingerprint`)."""
    make = of or fingerprint
    return {node.name: make(node.contract) for node in topology.nodes}


def fingerprint(contract: Contract) -> str:
    return token(image(contract))


def image(contract: Contract) -> dict[str, Any]:
    """The normalized contract image that the fingerprint hashes."""
    maintains = contract.section("maintains")
    continuity = contract.continuity
    data: dict[str, Any] = {
        "scheme": SCHEME,
        "identity": {"name": contract.name, "id": contract.id},
        "kind": contract.kind,
        "requires": [
            {"name": need.name, "text": _text(need.text), "facet_need": need.facet_need}
            for need in contract.needs
        ],
        "maintains": None
        if maintains is None
        else {
            "body": _body(maintains.body),
            "facets": [{"facet": f.name, "body": _body(f.body)} for f in maintains.facets],
        },
        "continuity": None
        if continuity is None
        else {"wake_source": continuity.wake_source.value, "cadence": continuity.cadence},
        "execution": [_body(s.body) for s in contract.sections_named("execution")],
        "postconditions": [
            postconditions.normalize(s.text) for s in postconditions.statements(contract)
        ],
    }
    hints = runtime_hints(contract)
    if hints is not None:  # only when stated: a contract without hints keeps its fingerprint
        data["runtime"] = hints.to_json()
    instance = contract.expanded_from
    if instance is not None:
        data["pattern"] = {
            "pattern": instance.pattern,
            "with": [[slot, thaw(value)] for slot, value in instance.bindings],
            "config": [[name, thaw(value)] for name, value in instance.config],
        }
    return data


def _text(text: str) -> str:
    return " ".join(text.split())


def _body(body: Body) -> dict[str, Any]:
    return {
        "paragraphs": [_text(p.text) for p in body.paragraphs],
        "items": [_item(item) for item in body.items],
        "clauses": [
            {"kind": c.kind.value, "qualifier": c.qualifier, "text": _text(c.text)}
            for c in body.clauses
        ],
        "fences": [{"info": f.info, "content": _code(f.content)} for f in body.fences],
        "subheadings": [_text(h.text) for h in body.subheadings],
    }


def _item(item: Item) -> dict[str, Any]:
    return {
        "name": item.name,
        "description": _text(item.description),
        "children": [_item(child) for child in item.children],
    }


def _code(content: str) -> str:
    """Code keeps its indentation (ProseScript is indentation-aware) but not trailing
    spaces, blank-line runs or a common left margin."""
    lines = [line.rstrip() for line in content.expandtabs(4).split("\n")]
    kept = [line for line in lines if line]
    margin = min((len(line) - len(line.lstrip()) for line in kept), default=0)
    return "\n".join(line[margin:] for line in lines if line)
