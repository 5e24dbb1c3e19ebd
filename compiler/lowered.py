"""Typed outputs of the lowering passes: canonicalizer specs, validators, predicates."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from .frozen import FrozenMap, thaw
from .ir import Span
from .values import value


@value(kw_only=True)
class FieldRule:
    """One canonicalizer field rule on a dotted path (`*` one key, `**` any keys)."""

    path: str
    material: bool | None = None
    collection: str | None = None  # "ordered" | "set"
    quantum: float | int | None = None
    collapse_whitespace: bool | None = None
    case_insensitive: bool | None = None
    span: Span | None = None  # the clause it was lowered from (not part of the JSON)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path}
        if self.material is not None:
            data["material"] = self.material
        if self.collection is not None:
            data["collection"] = self.collection
        if self.quantum is not None:
            data["number"] = {"quantum": self.quantum}
        text: dict[str, bool] = {}
        if self.collapse_whitespace is not None:
            text["collapse_whitespace"] = self.collapse_whitespace
        if self.case_insensitive is not None:
            text["case_insensitive"] = self.case_insensitive
        if text:
            data["text"] = text
        return data


@value(kw_only=True)
class FacetPaths:
    """A declared facet and the truth paths its token covers."""

    facet: str
    paths: tuple[str, ...]


@value(kw_only=True)
class CanonicalizerSpec:
    """The frozen lowering of one node's `### Maintains` (DESIGN.md section 6)."""

    default_material: bool = True
    rules: tuple[FieldRule, ...] = ()
    facets: tuple[FacetPaths, ...] = ()
    explicit: bool = False  # written by the author in a structured fence, not lowered

    @property
    def facet_names(self) -> tuple[str, ...]:
        """The facets the canonicalizer emits: `@atomic` first, then declaration order."""
        return ("@atomic", *(f.facet for f in self.facets))

    def to_json(self) -> dict[str, Any]:
        return {
            "default_material": self.default_material,
            "rules": [rule.to_json() for rule in self.rules],
            "facets": [{"facet": f.facet, "paths": list(f.paths)} for f in self.facets],
        }


@value(kw_only=True)
class Predicate:
    """A postcondition lowered to a deterministic check (kinds of the validator schema)."""

    id: str
    kind: str  # always | never | exists | every | count | compare
    path: str
    text: str
    params: FrozenMap[str, Any] = field(default_factory=FrozenMap)  # equals / has / op, value

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "path": self.path,
            "text": self.text,
            **thaw(self.params),
        }


@value(kw_only=True)
class Attestation:
    """A postcondition the render must attest by id (it has no deterministic form)."""

    id: str
    text: str
    span: Span | None = None


@value(kw_only=True)
class Validator:
    """The compiled postconditions of one node (DESIGN.md section 7)."""

    schema: FrozenMap[str, Any]  # a JSON Schema, frozen
    predicates: tuple[Predicate, ...] = ()
    attested: tuple[Attestation, ...] = ()

    @property
    def mode(self) -> str:
        return "render-attested" if self.attested else "deterministic"

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "schema": thaw(self.schema),
            "predicates": [p.to_json() for p in self.predicates],
            "attested": [{"id": a.id, "text": a.text} for a in self.attested],
        }
