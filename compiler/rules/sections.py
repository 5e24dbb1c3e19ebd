"""Section rules: known, retired and misplaced sections; required sections; facets."""

from __future__ import annotations

from collections.abc import Iterator

from .. import diagnostics as diag
from ..diagnostics import Diagnostic, Edit, Fix
from ..ir import ATOMIC_FACET, KINDS, Contract, Section, Span, WakeSource
from .context import RuleContext

R, F, G, P, T = KINDS

# section key → the kinds it applies to (a gateway is an external-driven responsibility)
SECTION_KINDS: dict[str, frozenset[str]] = {
    "description": frozenset(KINDS),
    "goal": frozenset({R, G}),
    "requires": frozenset({R, P}),
    "maintains": frozenset({R, G}),
    "parameters": frozenset({F}),
    "returns": frozenset({F}),
    "continuity": frozenset({R, G}),
    "errors": frozenset({R, F, G}),
    "invariants": frozenset({R, F, G, P}),
    "strategies": frozenset({R, F, G, T}),
    "environment": frozenset({R, F, G}),
    "runtime": frozenset({R, F, G}),
    "skills": frozenset({R, F}),
    "tools": frozenset({R, F}),
    "shape": frozenset({R, F}),
    "execution": frozenset({R, F}),
    "fixtures": frozenset({T}),
    "expects": frozenset({T}),
    "expects not": frozenset({T}),
    "changes": frozenset({T}),
    "slots": frozenset({P}),
    "config": frozenset({P}),
    "delegation": frozenset({P}),
    "schedule": frozenset({G}),
    "receives": frozenset({G}),
    "emits": frozenset({G}),
    "payload": frozenset({G}),
}

# what each section means, for hover and `prosec explain`
SECTION_DOCS: dict[str, str] = {
    "description": "Human summary; preserved for readers, not a contract.",
    "goal": "The render's one-sentence standing intent.",
    "requires": "Subscription needs: facets of other nodes' truths this node reads (Forme wires them).",
    "maintains": "The world-model schema: fields, what is material, `####` facets, postconditions.",
    "parameters": "Inputs a caller passes to this function at call time.",
    "returns": "The value this function returns.",
    "continuity": "What wakes this node: input-driven (default), self-driven (a cadence), external-driven.",
    "errors": "Declared failures the node may signal.",
    "invariants": "Properties that must hold regardless of outcome.",
    "strategies": "Guidance for judgment calls and edge cases.",
    "environment": "Runtime variables supplied by host infrastructure.",
    "runtime": "Execution hints such as `model`.",
    "skills": "Agent harness skills the host must provide (`namespace:name`).",
    "tools": "Host tools the host must provide (`cli:<name>`, `mcp:<name>`), or `(none)`.",
    "shape": "Capability boundaries: self, delegates, prohibited work.",
    "execution": "The render body in ProseScript (a ```prose fence).",
    "fixtures": "Test inputs supplied without prompting.",
    "expects": "Positive natural-language assertions of a test.",
    "expects not": "Negative natural-language assertions of a test.",
    "changes": "A test's fixture changes for a second run: which nodes wake after them.",
    "slots": "Responsibilities or functions a pattern requires from its instance.",
    "config": "Pattern-level parameters and their defaults.",
    "delegation": "How a pattern's slots interact (ProseScript or pseudocode).",
    "schedule": "Optional cron-like ingress cadence of a gateway.",
    "receives": "Optional HTTP/event ingress description of a gateway.",
    "emits": "The responsibility a gateway wakes.",
    "payload": "Notes about the event payload shape.",
}

# retired section → (what it folds into, a heading that replaces it per kind when renaming works)
RETIRED_SECTIONS: dict[str, tuple[str, dict[str, str]]] = {
    "ensures": (
        "`### Maintains` (responsibility) or `### Returns` (function)",
        {R: "Maintains", G: "Maintains", F: "Returns"},
    ),
    "criteria": ("postconditions inside `### Maintains`", {}),
    "fulfillment": (
        "the render itself (`### Execution`) or a delegated function",
        {R: "Execution", F: "Execution"},
    ),
    "constraints": (
        "`### Invariants` or `### Shape`",
        {R: "Invariants", F: "Invariants", P: "Invariants"},
    ),
    "memory": ("the node's single world-model (`### Maintains`); functions have none", {}),
    "services": ("nothing: deleted with `system`; compose with `call` or subscriptions", {}),
    "wiring": ("nothing: deleted with `system`; Forme wires `### Requires` to `### Maintains`", {}),
}

# blocks whose content OpenProse keeps inside `### Maintains`; the parser folds them in
OUTSIDE_MAINTAINS: dict[str, str] = {
    "facets": "its `####` facets are read as facets of `### Maintains`; move them there",
    "postconditions": "its bullets are read as postconditions; write them inside `### Maintains`",
}

RESERVED_FACET_PREFIX = "@"


def check(contract: Contract, context: RuleContext) -> Iterator[Diagnostic]:
    kind = contract.kind
    seen: dict[str, Section] = {}
    for section in contract.sections:
        key = section.key
        if key in RETIRED_SECTIONS:
            yield _retired(contract, section)
        elif key in OUTSIDE_MAINTAINS and kind in (R, G):
            yield diag.make(
                "section_outside_maintains",
                f"`### {section.title}` is not a section of its own: {OUTSIDE_MAINTAINS[key]}",
                section.heading_span,
            )
        elif key not in SECTION_KINDS:
            yield diag.make(
                "section_unknown",
                f"`### {section.title}` is not an OpenProse section; it is kept as documentation",
                section.heading_span,
            )
        elif kind in KINDS and kind not in SECTION_KINDS[key]:
            allowed = ", ".join(sorted(SECTION_KINDS[key]))
            yield diag.make(
                "section_wrong_kind",
                f"`### {section.title}` does not apply to a {kind} (it applies to: {allowed})",
                section.heading_span,
            )
        if key in seen and key in SECTION_KINDS:
            first = seen[key]
            yield diag.make(
                "section_duplicate",
                f"`### {section.title}` already appears on line {first.heading_span.line}",
                section.heading_span,
            )
        seen.setdefault(key, section)
    yield from _required(contract)
    yield from _facets(contract)
    yield from _execution(contract)


def _retired(contract: Contract, section: Section) -> Diagnostic:
    folds_into, successors = RETIRED_SECTIONS[section.key]
    successor = successors.get(contract.kind)
    fix = None
    if successor is not None and contract.section(successor.lower()) is None:
        fix = Fix(
            title=f"Rename to `### {successor}`",
            edits=(Edit(span=section.heading_span, new_text=f"### {successor}"),),
        )
    return diag.make(
        "section_retired",
        f"`### {section.title}` is retired; it folds into {folds_into}",
        section.heading_span,
        fix,
    )


def _required(contract: Contract) -> Iterator[Diagnostic]:
    kind = contract.kind
    if kind in (R, G) and contract.section("maintains") is None:
        yield diag.make(
            "maintains_missing",
            f"{kind} `{contract.name}` has no `### Maintains`: declare the truth it keeps current",
            contract.name_span,
        )
    if kind == F and contract.section("returns") is None:
        yield diag.make(
            "returns_missing",
            f"function `{contract.name}` has no `### Returns`: declare the value it produces",
            contract.name_span,
        )
    continuity = contract.continuity
    if (
        kind == G
        and continuity is not None
        and continuity.declared
        and continuity.wake_source is not WakeSource.EXTERNAL
    ):
        section = contract.section("continuity")
        yield diag.make(
            "gateway_not_external",
            f"gateway `{contract.name}` must be external-driven, not "
            f"{continuity.wake_source.value}-driven",
            section.heading_span if section else contract.name_span,
        )


def _facets(contract: Contract) -> Iterator[Diagnostic]:
    seen: dict[str, Span] = {}
    for facet in contract.facets:
        name = facet.name
        if name == ATOMIC_FACET or name.startswith(RESERVED_FACET_PREFIX):
            yield diag.make(
                "facet_reserved",
                f"facet name `{name}` is reserved: `@atomic` is the whole-truth token every node has",
                facet.heading_span,
            )
            continue
        key = name.lower()
        if key in seen:
            yield diag.make(
                "facet_duplicate",
                f"facet `{name}` is already declared on line {seen[key].line}",
                facet.heading_span,
            )
        seen.setdefault(key, facet.heading_span)


def _execution(contract: Contract) -> Iterator[Diagnostic]:
    for section in contract.sections_named("execution"):
        body = section.body
        if body.fences or not (body.items or body.paragraphs):
            continue
        yield diag.make(
            "execution_unfenced",
            "`### Execution` is unfenced pseudocode, kept as text; put ProseScript in a ```prose fence",
            section.heading_span,
        )
