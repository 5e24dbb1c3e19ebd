"""Apply a frozen canonicalizer spec to a structured truth → FingerprintMap.

A spec (schemas/canonicalizer-spec.schema.json) is `default_material`, field `rules` on
dotted paths and `facets`. Paths address object keys; lists are walked through
transparently, so `items.fetched_at` reaches the field in every element of `items`.
A segment `*` matches any one key and `**` any number of keys (zero included), so
`**.fetched_at` matches the field anywhere.

Rule semantics, applied bottom-up (children are reduced before their parent):

* `material: false` drops the field; with `default_material: false` only fields under a
  `material: true` rule count (plus the path down to them).
* `collection: "set"` sorts a list by the canonical JSON of its (reduced) elements and
  drops duplicates; `"ordered"` keeps the order (the default).
* `number: {quantum: q}` rounds numbers to the nearest multiple of q (half to even).
* `text: {collapse_whitespace, case_insensitive}` collapses runs of whitespace to one
  space and strips the ends, and/or case-folds.

When several rules match one field, their normalizations combine; for `material` a
rule without wildcards beats a wildcard rule, and otherwise the later rule wins.

Tokens: `@atomic` is the token of the whole reduced truth; a facet's token is the token
of the reduced truth projected onto the facet's paths (structure kept, `{}` when none of
them is present). A facet listed by the compiled intent without paths in the spec owns
the top-level key of its own name. A producer that never committed has the cold-start
map: every facet's token is the token of JSON `null`, which no committed truth (always
an object) can produce.
"""

from __future__ import annotations

import contextlib
import decimal
import functools
import gc
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from .canonical import canonical_json, sha256_token, token
from .pathtrie import Node as _Node
from .pathtrie import Trie as _Trie
from .pathtrie import matched as _matched
from .pathtrie import step as _step

__all__ = [
    "ATOMIC",
    "COLD_START_TOKEN",
    "CanonicalizerSpec",
    "FacetSpec",
    "Rule",
    "SpecError",
    "cold_start_map",
    "fingerprint",
    "reduce",
]

ATOMIC = "@atomic"
COLD_START_TOKEN = token(None)
_MISSING: Any = object()


class SpecError(ValueError):
    """A canonicalizer spec that is malformed (bad path, unknown key, bad quantum)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One field rule of a canonicalizer spec."""

    path: tuple[str, ...]
    material: bool | None = None
    collection: str | None = None
    quantum: decimal.Decimal | None = None
    collapse_whitespace: bool = False
    case_insensitive: bool = False

    @property
    def wildcard(self) -> bool:
        return any(part in ("*", "**") for part in self.path)


@dataclass(frozen=True, slots=True, kw_only=True)
class FacetSpec:
    """A declared facet and the truth paths it covers."""

    facet: str
    paths: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CanonicalizerSpec:
    """A parsed, frozen canonicalizer spec."""

    default_material: bool = True
    rules: tuple[Rule, ...] = ()
    facets: tuple[FacetSpec, ...] = ()
    _plan: _Trie | None = field(default=None, compare=False, repr=False)
    _material: _Trie | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CanonicalizerSpec:
        """Parse the JSON form (already schema-valid or not: errors raise SpecError)."""
        if not isinstance(data, Mapping):
            raise SpecError("a canonicalizer spec must be an object")
        unknown = set(data) - {"default_material", "rules", "facets"}
        if unknown:
            raise SpecError(f"unknown spec keys {sorted(unknown)}")
        default_material = data.get("default_material", True)
        if not isinstance(default_material, bool):
            raise SpecError("default_material must be a boolean")
        rules = tuple(_parse_rule(index, raw) for index, raw in enumerate(data.get("rules", [])))
        facets = tuple(_parse_facet(raw) for raw in data.get("facets", []))
        names = [facet.facet for facet in facets]
        if len(set(names)) != len(names):
            raise SpecError(f"facets listed twice in {names}")
        if ATOMIC in names:
            raise SpecError("'@atomic' is implicit and may not be declared with paths")
        # material:true rules only matter where they override a wildcard drop, or when
        # default_material is false (then they select what counts).
        drops = any(rule.material is False for rule in rules)
        reducing = [r for r in rules if r.material is False or _normalizes(r) or drops]
        material = [rule for rule in rules if rule.material is True]
        return cls(
            default_material=default_material,
            rules=rules,
            facets=facets,
            _plan=_Trie.build(reducing) if reducing else None,
            _material=None if default_material else _Trie.build(material),
        )

    def facet_paths(self, facet: str) -> tuple[tuple[str, ...], ...]:
        """The paths a facet covers (its own key when the spec does not list it)."""
        for spec in self.facets:
            if spec.facet == facet:
                return spec.paths
        return ((facet,),)


# specs parsed this process, by their JSON bytes (key order kept): a manifest is checked
# and then loaded, and many nodes share one spec
_PARSED: dict[bytes, CanonicalizerSpec | str] = {}
_PARSED_LIMIT = 65_536


def parse_spec(data: Mapping[str, Any]) -> CanonicalizerSpec:
    """`CanonicalizerSpec.from_json`, remembered by the spec's JSON bytes (specs are frozen
    values); raises SpecError as it does."""
    try:
        key = orjson.dumps(data)
    except (TypeError, orjson.JSONEncodeError):
        return CanonicalizerSpec.from_json(data)
    found = _PARSED.get(key)
    if found is None:
        try:
            found = CanonicalizerSpec.from_json(data)
        except SpecError as exc:
            found = str(exc)
        if len(_PARSED) >= _PARSED_LIMIT:
            _PARSED.clear()
        _PARSED[key] = found
    if isinstance(found, str):
        raise SpecError(found)
    return found


def _normalizes(rule: Rule) -> bool:
    return bool(
        rule.collection == "set"
        or rule.quantum is not None
        or rule.collapse_whitespace
        or rule.case_insensitive
    )


def _parse_path(raw: Any, where: str) -> tuple[str, ...]:
    if not isinstance(raw, str) or not raw:
        raise SpecError(f"{where}: a path must be a non-empty string")
    parts = tuple(raw.split("."))
    if any(part == "" for part in parts):
        raise SpecError(f"{where}: path {raw!r} has an empty segment")
    return parts


def _parse_rule(index: int, raw: Any) -> Rule:
    where = f"rules[{index}]"
    if not isinstance(raw, Mapping):
        raise SpecError(f"{where} must be an object")
    unknown = set(raw) - {"path", "material", "collection", "number", "text"}
    if unknown:
        raise SpecError(f"{where}: unknown keys {sorted(unknown)}")
    material = raw.get("material")
    if material is not None and not isinstance(material, bool):
        raise SpecError(f"{where}: material must be a boolean")
    collection = raw.get("collection")
    if collection not in (None, "ordered", "set"):
        raise SpecError(f"{where}: collection must be 'ordered' or 'set'")
    quantum = None
    if "number" in raw:
        number = raw["number"]
        q = number.get("quantum") if isinstance(number, Mapping) else None
        if isinstance(q, bool) or not isinstance(q, int | float) or q <= 0:
            raise SpecError(f"{where}: number.quantum must be a positive number")
        quantum = decimal.Decimal(repr(q))
    text = raw.get("text", {})
    if not isinstance(text, Mapping) or set(text) - {"collapse_whitespace", "case_insensitive"}:
        raise SpecError(f"{where}: text takes collapse_whitespace and case_insensitive")
    return Rule(
        path=_parse_path(raw.get("path"), where),
        material=material,
        collection=collection,
        quantum=quantum,
        collapse_whitespace=bool(text.get("collapse_whitespace", False)),
        case_insensitive=bool(text.get("case_insensitive", False)),
    )


def _parse_facet(raw: Any) -> FacetSpec:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("facet"), str):
        raise SpecError("each facet must be an object with a string 'facet'")
    paths = raw.get("paths", [])
    if not isinstance(paths, list):
        raise SpecError(f"facet {raw['facet']!r}: paths must be a list")
    return FacetSpec(
        facet=raw["facet"],
        paths=tuple(_parse_path(path, f"facet {raw['facet']!r}") for path in paths),
    )


# ---------------------------------------------------------------------------------------
# Reduction
# ---------------------------------------------------------------------------------------


def reduce(spec: CanonicalizerSpec, truth: Any) -> Any:
    """Return the canonical material form of `truth` under `spec` (the input is not mutated)."""
    value = truth
    if spec._plan is not None:
        value = _reduce(value, spec._plan.start)
    if spec._material is not None:
        projected = _project(value, spec._material.start)
        value = {} if projected is _MISSING else projected
    return value


# a key a rule names: its next states, whether it is dropped, its rules, and the plan
# of its next states (None when a wildcard is active there)
_Step = tuple[str, tuple["_Node", ...], bool, list[Rule], "tuple[_Step, ...] | None"]


@functools.lru_cache(maxsize=8192)
def _literal_plan(states: tuple[_Node, ...]) -> tuple[_Step, ...] | None:
    """For states without wildcards: each key a rule names, its next states, whether it
    is dropped, its rules and its own plan. None when a wildcard is active (every key
    must be seen)."""
    keys: set[str] = set()
    for state in states:
        if state.star is not None or state.is_glob:
            return None
        keys.update(state.children)
    plan = []
    for key in sorted(keys):
        nxt = _step(states, key)
        rules = _matched(nxt)
        drop = bool(rules) and _material(rules) is False
        plan.append((key, nxt, drop, rules, None if drop else _literal_plan(nxt)))
    return tuple(plan)


def _reduce(value: Any, states: tuple[_Node, ...]) -> Any:
    if isinstance(value, dict):
        plan = _literal_plan(states)
        if plan is not None:
            return _reduce_literal(value, plan)
        out = dict(value)
        for key, item in value.items():
            nxt = _step(states, key)
            if nxt:
                rules = _matched(nxt)
                _apply(out, key, item, nxt, bool(rules) and _material(rules) is False, rules)
        return out
    if isinstance(value, list):
        plan = _literal_plan(states)
        if plan is not None:
            # Fast path for the common case: a long list of objects under path rules.
            return [
                _reduce_literal(item, plan) if type(item) is dict else _reduce(item, states)
                for item in value
            ]
        return [_reduce(item, states) for item in value]
    return value


def _reduce_literal(value: dict[str, Any], plan: tuple[_Step, ...]) -> dict[str, Any]:
    """Copy the object once, then touch only the keys a rule names (inlined `_apply`:
    this runs once per object of a large truth)."""
    out = value.copy()
    for key, nxt, drop, rules, sub in plan:
        if key in out:
            if drop:
                del out[key]
                continue
            item = out[key]
            if sub is not None and type(item) is dict:
                reduced = _reduce_literal(item, sub)
            else:
                reduced = _reduce(item, nxt)
            out[key] = _normalize(reduced, rules) if rules else reduced
    return out


def _apply(
    out: dict[str, Any],
    key: str,
    item: Any,
    nxt: tuple[_Node, ...],
    drop: bool,
    rules: list[Rule],
) -> None:
    if drop:
        del out[key]
        return
    reduced = _reduce(item, nxt)
    out[key] = _normalize(reduced, rules) if rules else reduced


def _material(rules: list[Rule]) -> bool | None:
    verdict: bool | None = None
    exact: bool | None = None
    for rule in rules:
        if rule.material is None:
            continue
        if rule.wildcard:
            verdict = rule.material
        else:
            exact = rule.material
    return exact if exact is not None else verdict


def _normalize(value: Any, rules: list[Rule]) -> Any:
    quantum = next((r.quantum for r in reversed(rules) if r.quantum is not None), None)
    collapse = any(rule.collapse_whitespace for rule in rules)
    fold = any(rule.case_insensitive for rule in rules)
    as_set = any(rule.collection == "set" for rule in rules)
    if quantum is not None or collapse or fold:
        value = _scalars(value, quantum, collapse, fold)
    if as_set and isinstance(value, list):
        unique = {canonical_json(item): item for item in value}
        value = [unique[key] for key in sorted(unique)]
    return value


def _scalars(value: Any, quantum: decimal.Decimal | None, collapse: bool, fold: bool) -> Any:
    if isinstance(value, list):
        return [_scalars(item, quantum, collapse, fold) for item in value]
    if isinstance(value, str):
        if collapse:
            value = " ".join(value.split())
        if fold:
            value = value.casefold()
        return value
    if quantum is not None and isinstance(value, int | float) and not isinstance(value, bool):
        return _quantize(value, quantum)
    return value


def _quantize(number: float, quantum: decimal.Decimal) -> int | float:
    exact = decimal.Decimal(repr(number)) if isinstance(number, float) else decimal.Decimal(number)
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        steps = (exact / quantum).to_integral_value(rounding=decimal.ROUND_HALF_EVEN)
        result = steps * quantum
    if result == result.to_integral_value():
        return int(result)
    return float(result)


def _project(value: Any, states: tuple[_Node, ...]) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        plan = _literal_plan(states)
        if plan is not None:  # visit only the keys a path names
            for key, nxt, _drop, rules, _sub in plan:
                if key in value:
                    _project_key(out, key, value[key], nxt, bool(rules))
        else:
            for key, item in value.items():
                nxt = _step(states, key)
                if nxt:
                    _project_key(out, key, item, nxt, bool(_matched(nxt)))
        return out if out else _MISSING
    if isinstance(value, list):
        items = [_project(item, states) for item in value]
        kept = [item for item in items if item is not _MISSING]
        return kept if kept else _MISSING
    return _MISSING


@functools.lru_cache(maxsize=4096)
def _facet_trie(paths: tuple[tuple[str, ...], ...]) -> _Trie:
    """Tries are immutable once built, so one per distinct facet path set is enough."""
    return _Trie.build(Rule(path=path, material=True) for path in paths)


def _project_key(
    out: dict[str, Any], key: str, item: Any, nxt: tuple[_Node, ...], whole: bool
) -> None:
    if whole:
        out[key] = item
        return
    sub = _project(item, nxt)
    if sub is not _MISSING:
        out[key] = sub


def fingerprint(
    spec: CanonicalizerSpec, truth: Any, facets: Iterable[str], *, finite: bool = False
) -> dict[str, str]:
    """Return the FingerprintMap: `@atomic` always, plus one token per listed facet.

    `finite=True` (for truths from `build_truth`, which refuses NaN and infinity)
    enables the fastest canonical encoder."""
    with no_gc():
        return _fingerprint(spec, truth, facets, finite)


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic GC: JSON trees hold no cycles, and on a large heap every
    generation-2 pass would rescan the whole truth while we allocate its reduced copy."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _fingerprint(
    spec: CanonicalizerSpec, truth: Any, facets: Iterable[str], finite: bool
) -> dict[str, str]:
    def token(value: Any) -> str:
        return sha256_token(canonical_json(value, finite=finite))

    reduced = reduce(spec, truth)
    tokens = {ATOMIC: token(reduced)}
    for facet in facets:
        if facet == ATOMIC:
            continue
        trie = _facet_trie(spec.facet_paths(facet))
        projected = _project(reduced, trie.start)
        tokens[facet] = token({} if projected is _MISSING else projected)
    return tokens


def cold_start_map(facets: Iterable[str]) -> dict[str, str]:
    """The one cold-start map of a producer that never committed."""
    return {ATOMIC: COLD_START_TOKEN, **{f: COLD_START_TOKEN for f in facets if f != ATOMIC}}
