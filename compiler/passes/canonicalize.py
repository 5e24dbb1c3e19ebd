"""`### Maintains` → canonicalizer specs; the structured-backing rule; facet cross-check."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from prosec.runtime import userjson

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..ir import Body, Clause, ClauseKind, Contract, Facet, Section, Topology
from ..lowered import CanonicalizerSpec, FacetPaths, FieldRule
from ..parse.frontmatter import load_yaml

_CODE = re.compile(r"(`+)(.+?)\1")
_FIELD = re.compile(r"^[A-Za-z_@$][\w@$:\-]*(?:\.(?:\*\*|\*|[\w@$:\-]+))*$")
_VALUES = frozenset({"true", "false", "null", "none"})
_FILE = re.compile(r"\.(?:md|json|ya?ml|ts|js|py|txt|toml|csv)$", re.IGNORECASE)
_IMMATERIAL_TAIL = re.compile(r"\b(?:is|are)\s+(?:also\s+)?immaterial\b.*$", re.IGNORECASE)
_PATHS_LINE = re.compile(r"^\s*\*{0,2}paths?\*{0,2}\s*:", re.IGNORECASE)
_SET = re.compile(
    r"\b(?:unordered|as a set|set semantics|order(?:ing)? (?:is )?immaterial)\b|\bsets?\b", re.I
)
_ORDERED = re.compile(r"\b(?:ordered|order matters|in order)\b", re.IGNORECASE)
_CASE = re.compile(r"\bcase[- ]insensitive(?:ly)?\b", re.IGNORECASE)
_SPACE = re.compile(r"\bwhitespace[- ]insensitive\b|\bcollapse[sd]? whitespace\b", re.IGNORECASE)
_QUANTUM = re.compile(
    r"(?:within|±|\+/-|to the nearest|rounded to|tolerance(?: of)?)\s*([0-9]*\.?[0-9]+)",
    re.IGNORECASE,
)
_SPEC_FENCES = ("json", "yaml", "yml")

Lowering = Callable[[Contract], tuple[CanonicalizerSpec, list[Diagnostic]]]


def run(
    topology: Topology, lower_contract: Lowering | None = None
) -> tuple[dict[str, CanonicalizerSpec], list[Diagnostic]]:
    """One spec per topology node, then the backing lint and the facet cross-check.

    `lower_contract` replaces `lower` for callers that memoize it (the language server
    lowers only the contracts an edit changed)."""
    specs: dict[str, CanonicalizerSpec] = {}
    found: list[Diagnostic] = []
    by_name = {node.name: node.contract for node in topology.nodes}
    for name, contract in sorted(by_name.items()):
        spec, lowered = (lower_contract or lower)(contract)
        specs[name] = spec
        found.extend(lowered)
    found.extend(_backing(by_name, specs, topology))
    found.extend(_cross_check(by_name, specs, topology))
    return specs, found


def lower(contract: Contract) -> tuple[CanonicalizerSpec, list[Diagnostic]]:
    """The deterministic lowering of one contract's `### Maintains`."""
    maintains = contract.section("maintains")
    if maintains is None:
        return CanonicalizerSpec(), []
    found: list[Diagnostic] = []
    rules: list[FieldRule] = []
    for clause in maintains.body.clauses:
        rules.extend(_clause_rules(clause, None, found))
    facets: list[FacetPaths] = []
    for facet in maintains.facets:
        paths = _facet_paths(facet)
        facets.append(FacetPaths(facet=facet.name, paths=paths))
        for clause in facet.body.clauses:
            rules.extend(_clause_rules(clause, paths, found))
    if contract.truth_name:  # ``The `x` truth.``: a facet over the whole truth
        facets.append(FacetPaths(facet=contract.truth_name, paths=("**",)))
    spec = CanonicalizerSpec(rules=_unique(rules), facets=tuple(facets))
    explicit = _explicit(maintains, spec, found)
    return explicit or spec, found


def _clause_rules(
    clause: Clause, scope: tuple[str, ...] | None, found: list[Diagnostic]
) -> Iterator[FieldRule]:
    if clause.kind is ClauseKind.IMMATERIAL:
        text = clause.text
        if re.search(r"\bimmaterial\b", text, re.IGNORECASE):  # written as a sentence
            text = _immaterial_subject(text)
        fields = _fields(text)
        if not fields:
            found.append(
                diag.make(
                    "clause_unlowered",
                    "this immaterial clause names no field, so the canonicalizer cannot drop "
                    "anything; write the fields in backticks, e.g. `immaterial: `fetched_at`, "
                    "`request_id``",
                    clause.span,
                )
            )
        for name in fields:
            for path in _paths(name, scope):
                yield FieldRule(path=path, material=False, span=clause.span)
    elif clause.kind is ClauseKind.MATERIAL:
        yield from _material(clause, scope, found)


def _material(
    clause: Clause, scope: tuple[str, ...] | None, found: list[Diagnostic]
) -> Iterator[FieldRule]:
    """Each `;`-separated part applies its normalizations to the fields it names."""
    warned = False
    for part in clause.text.split(";"):
        collection = "set" if _SET.search(part) else ("ordered" if _ORDERED.search(part) else None)
        quantum_match = _QUANTUM.search(part)
        quantum = _number(quantum_match.group(1)) if quantum_match else None
        case = True if _CASE.search(part) else None
        space = True if _SPACE.search(part) else None
        fields = _fields(part)
        if not fields:
            normalizes = any(v is not None for v in (collection, quantum, case, space))
            if normalizes and not warned:
                warned = True
                found.append(
                    diag.make(
                        "clause_unlowered",
                        "this Material clause asks for a normalization but names no field; "
                        "write the fields in backticks, e.g. `Material: `events` (unordered)`",
                        clause.span,
                    )
                )
            continue
        for name in fields:
            for path in _paths(name, scope):
                yield FieldRule(
                    path=path,
                    material=True,
                    collection=collection,
                    quantum=quantum,
                    case_insensitive=case,
                    collapse_whitespace=space,
                    span=clause.span,
                )


def _immaterial_subject(sentence: str) -> str:
    """The part of a sentence that is declared immaterial (`x and y are immaterial`)."""
    for part in re.split(r";|(?<=\.)\s", sentence):
        if re.search(r"\bimmaterial\b", part, re.IGNORECASE):
            return _IMMATERIAL_TAIL.sub("", part)
    return sentence


def _fields(text: str) -> list[str]:
    names = []
    for match in _CODE.finditer(text):
        name = match.group(2).strip()
        if _FIELD.match(name) and name.lower() not in _VALUES and not _FILE.search(name):
            names.append(name)
    return list(dict.fromkeys(names))


def _paths(name: str, scope: tuple[str, ...] | None) -> list[str]:
    if scope is None:
        return [name if "." in name else f"**.{name}"]
    return [f"{root}.{name}" if "." in name else f"{root}.**.{name}" for root in scope]


def _facet_paths(facet: Facet) -> tuple[str, ...]:
    """A facet owns the truth key of its own name unless a `Paths:` line names others."""
    named: list[str] = []
    for paragraph in facet.body.paragraphs:
        if _PATHS_LINE.match(paragraph.text):
            named.extend(_fields(paragraph.text))
    for item in facet.body.items:
        if item.name and item.name.lower() in ("path", "paths"):
            named.extend(_fields(item.text))
    if named:
        return tuple(dict.fromkeys(named))
    own = facet.name if all(facet.name.split(".")) else facet.name.replace(".", "_")
    return (own,)


def _number(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() else value


def _unique(rules: list[FieldRule]) -> tuple[FieldRule, ...]:
    seen: dict[tuple[Any, ...], FieldRule] = {}
    for rule in rules:
        seen.setdefault((rule.path, json.dumps(rule.to_json(), sort_keys=True)), rule)
    return tuple(seen.values())


def _explicit(
    maintains: Section, lowered: CanonicalizerSpec, found: list[Diagnostic]
) -> CanonicalizerSpec | None:
    """A ```json / ```yaml fence whose top-level key is `canonicalizer` replaces the
    lowered rules (facet paths it lists override the headings' defaults)."""
    for body in (maintains.body, *(f.body for f in maintains.facets)):
        for fence in body.fences:
            if fence.info not in _SPEC_FENCES:
                continue
            data = _load(fence.content, fence.info, fence.content_line)
            if not isinstance(data, Mapping) or "canonicalizer" not in data:
                continue
            problems = _spec_problems(data["canonicalizer"], lowered)
            if problems:
                found.append(
                    diag.make(
                        "canonicalizer_invalid",
                        "explicit canonicalizer block is not a valid spec: " + "; ".join(problems),
                        fence.span,
                    )
                )
                return None
            return _from_json(data["canonicalizer"], lowered)
    return None


def _load(content: str, info: str, line: int) -> Any:
    if info == "json":
        try:  # strict: no NaN, no 1e400, depth-capped (a deep fence must not crash)
            return userjson.loads(content, source="")
        except userjson.JSONInputError:
            return None
    return load_yaml(content, line).value


def _spec_problems(data: Any, lowered: CanonicalizerSpec) -> list[str]:
    from prosec.runtime.schemas import validate

    found = [
        f"{f.path or '(root)'}: {f.message}"
        for f in validate(data, "canonicalizer-spec.schema.json")
    ]
    if not found:
        declared = {f.facet for f in lowered.facets}
        for facet in data.get("facets", []):
            if facet["facet"] not in declared:
                found.append(f"facet `{facet['facet']}` has no `####` heading under Maintains")
    return found


def _from_json(data: Mapping[str, Any], lowered: CanonicalizerSpec) -> CanonicalizerSpec:
    rules = tuple(
        FieldRule(
            path=r["path"],
            material=r.get("material"),
            collection=r.get("collection"),
            quantum=r.get("number", {}).get("quantum"),
            collapse_whitespace=r.get("text", {}).get("collapse_whitespace"),
            case_insensitive=r.get("text", {}).get("case_insensitive"),
        )
        for r in data.get("rules", [])
    )
    paths = {f["facet"]: tuple(f["paths"]) for f in data.get("facets", [])}
    facets = tuple(
        FacetPaths(facet=f.facet, paths=paths.get(f.facet, f.paths)) for f in lowered.facets
    )
    return CanonicalizerSpec(
        default_material=bool(data.get("default_material", True)),
        rules=rules,
        facets=facets,
        explicit=True,
    )


def _backing(
    contracts: Mapping[str, Contract],
    specs: Mapping[str, CanonicalizerSpec],
    topology: Topology,
) -> Iterator[Diagnostic]:
    """Anything subscribed needs structured backing: named fields, not only prose."""
    subscribers: dict[tuple[str, str], set[str]] = {}
    for edge in topology.edges:
        subscribers.setdefault((edge.producer, edge.facet), set()).add(edge.subscriber)
    for (producer, facet), subs in sorted(subscribers.items()):
        contract = contracts.get(producer)
        spec = specs.get(producer)
        if contract is None or spec is None or spec.explicit or contract.expanded_from:
            continue
        maintains = contract.section("maintains")
        if maintains is None:
            continue  # maintains_missing already says so
        part = next((f for f in maintains.facets if f.name == facet), None)
        others = {f.name for f in maintains.facets} | {"@atomic"}
        backed = _backed(part.body, others) if part else _atomic_backed(maintains, others)
        if backed:
            continue
        who = ", ".join(f"`{s}`" for s in sorted(subs))
        yield diag.make(
            "structured_backing_missing",
            f"facet `{facet}` of `{producer}` is subscribed by {who} but names no structured "
            "field, so its token would hash prose; list its fields as `- `name`: …` items "
            "(or a `Paths:` line) so the fingerprint sees structured truth",
            part.heading_span if part else maintains.heading_span,
        )


def _backed(body: Body, facets: set[str]) -> bool:
    """Named items, a fence, or a backticked field (a facet's name is no field)."""
    if body.fences or any(item.name for item in body.items):
        return True
    texts = [p.text for p in body.paragraphs] + [i.text for i in body.items]
    texts += [c.text for c in body.clauses]
    return any(set(_fields(text)) - facets for text in texts)


def _atomic_backed(maintains: Section, facets: set[str]) -> bool:
    return _backed(maintains.body, facets) or any(_backed(f.body, facets) for f in maintains.facets)


def _cross_check(
    contracts: Mapping[str, Contract],
    specs: Mapping[str, CanonicalizerSpec],
    topology: Topology,
) -> Iterator[Diagnostic]:
    """Forme's edge facets must be facets the producer's canonicalizer emits."""
    for edge in topology.edges:
        spec = specs.get(edge.producer)
        if spec is None or edge.facet in spec.facet_names:
            continue
        span = edge.need.span if edge.need else contracts[edge.subscriber].name_span
        yield diag.make(
            "facet_not_emitted",
            f"`{edge.subscriber}` subscribes to `{edge.producer}.{edge.facet}`, but the "
            f"canonicalizer of `{edge.producer}` emits only "
            + ", ".join(f"`{f}`" for f in spec.facet_names),
            span,
        )
