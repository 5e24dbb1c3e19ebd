"""The compiled-intent checker, rule by rule: one bad manifest per rule gives exactly that
problem with its JSON path; `check` and `parse_intent` (what `prosec run` loads with)
raise the first problem `iter_problems` yields; `prosec validate` and `prosec activate`
print every problem and `prosec run` names the first."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prosec.runtime.canonical import token
from prosec.runtime.intent import parse_intent
from prosec.runtime.intent_check import IntentError, check, iter_problems
from prosec.runtime.problems import Problem

from .project import Project, intent

Doc = dict[str, Any]
OTHER_FP = token({"other": 1})


def base() -> Doc:
    """A valid manifest: gateway g (external, facet `items`) → b → d; b has a validator,
    d a caller input; one warning diagnostic. Node order: b, d, g; edges as listed."""
    doc = intent(
        {
            "g": {
                "wake_source": "external",
                "facets": ["items"],
                "spec": {"facets": [{"facet": "items", "paths": ["items"]}]},
            },
            "b": {
                "validator": {
                    "mode": "deterministic",
                    "predicates": [{"id": "p1", "kind": "exists", "path": "items"}],
                }
            },
            "d": {"caller_inputs": [{"name": "q", "type": "text"}]},
        },
        [("b", "g", "items"), ("d", "b", "@atomic")],
        entry_points=["g"],
    )
    doc["diagnostics"] = [{"severity": "warning", "message": "x", "sourcePath": "src/b.prose.md"}]
    return doc


def rename(doc: Doc, old: str, new: str) -> None:
    for entry in [*doc["topology"]["nodes"], *doc["canonicalizers"], *doc["postconditions"]]:
        if entry["node"] == old:
            entry["node"] = new
    for edge in doc["topology"]["edges"]:
        for end in ("subscriber", "producer"):
            if edge[end] == old:
                edge[end] = new
    doc["contract_fingerprints"][new] = doc["contract_fingerprints"].pop(old)


def twice(section: str, index: int, **changes: Any) -> Callable[[Doc], None]:
    def change(doc: Doc) -> None:
        doc[section].append({**copy.deepcopy(doc[section][index]), **changes})

    return change


def cycle(doc: Doc) -> None:
    doc["topology"]["edges"].append({"subscriber": "b", "producer": "d", "facet": "@atomic"})


def cycle_written(doc: Doc) -> None:
    cycle(doc)
    doc["topology"]["acyclic"] = False


def blank_fingerprint(doc: Doc) -> None:
    doc["topology"]["nodes"][0]["contract_fingerprint"] = ""
    doc["contract_fingerprints"]["b"] = ""


B_VALIDATOR = "$.postconditions[0].validator"
RULES: list[tuple[str, Callable[[Doc], Any], list[str]]] = [
    ("schema", lambda d: d.update(kind="other"), ["$.kind"]),
    (
        "fingerprint-well-formed",
        blank_fingerprint,
        ["$.contract_fingerprints.b", "$.topology.nodes[0].contract_fingerprint"],
    ),
    (
        "retired-field",
        lambda d: d["topology"].update(activations=[]),
        ["$.topology", "$.topology.activations"],  # the schema's and the retired rule's
    ),
    (
        "retired-kind",
        lambda d: d["sources"][0].update(kind="system"),
        ["$.sources[0].kind", "$.sources[0].kind"],  # the schema's and the retired rule's
    ),
    (
        "duplicate-node",
        lambda d: d["topology"]["nodes"].append(copy.deepcopy(d["topology"]["nodes"][1])),
        ["$.topology.nodes"],
    ),
    ("unsafe-node-name", lambda d: rename(d, "d", ".."), ["$.topology.nodes[1].node"]),
    (
        "unsafe-caller-input",
        lambda d: d["topology"]["nodes"][1]["caller_inputs"][0].update(name="a/b"),
        ["$.topology.nodes[1].caller_inputs[0].name"],
    ),
    (
        "edge-producer",
        lambda d: d["topology"]["edges"][0].update(producer="ghost"),
        ["$.topology.edges[0].producer"],
    ),
    (
        "edge-subscriber",
        lambda d: d["topology"]["edges"][0].update(subscriber="ghost"),
        ["$.topology.edges[0].subscriber"],
    ),
    (
        "self-subscription",
        lambda d: d["topology"]["edges"][1].update(producer="d"),
        ["$.topology.edges[1]"],
    ),
    (
        "edge-facet-emitted",
        lambda d: d["topology"]["edges"][0].update(facet="nope"),
        ["$.topology.edges[0].facet"],
    ),
    (
        "entry-point-is-node",
        lambda d: d["topology"]["entry_points"].append("ghost"),
        ["$.topology.entry_points[1]"],
    ),
    (
        "entry-point-is-external",
        lambda d: d["topology"]["entry_points"].append("b"),
        ["$.topology.entry_points[1]"],
    ),
    (
        "external-is-entry-point",
        lambda d: d["topology"].update(entry_points=[]),
        ["$.topology.entry_points"],
    ),
    ("acyclic-honest-cycle", cycle, ["$.topology.acyclic"]),
    ("cycle-never-written", cycle_written, ["$.topology.acyclic"]),
    (
        "acyclic-honest-no-cycle",
        lambda d: d["topology"].update(acyclic=False),
        ["$.topology.acyclic"],
    ),
    ("canonicalizer-missing", lambda d: d["canonicalizers"].pop(1), ["$.canonicalizers"]),
    ("canonicalizer-twice", twice("canonicalizers", 1), ["$.canonicalizers"]),
    (
        "canonicalizer-node",
        twice("canonicalizers", 1, node="ghost"),
        ["$.canonicalizers[3].node"],
    ),
    ("postcondition-missing", lambda d: d["postconditions"].pop(1), ["$.postconditions"]),
    ("postcondition-twice", twice("postconditions", 1), ["$.postconditions"]),
    (
        "postcondition-node",
        twice("postconditions", 1, node="ghost"),
        ["$.postconditions[3].node"],
    ),
    (
        "spec-well-formed",
        lambda d: d["canonicalizers"][2]["spec"]["facets"].append(
            {"facet": "items", "paths": ["other"]}
        ),
        ["$.canonicalizers[2].spec"],
    ),
    (
        "spec-facets-listed",
        lambda d: d["canonicalizers"][0].update(spec={"facets": [{"facet": "x", "paths": ["x"]}]}),
        ["$.canonicalizers[0].spec.facets[0]"],
    ),
    (
        "validator-mode-matches-entry",
        lambda d: d["postconditions"][0].update(mode="render-attested"),
        [f"{B_VALIDATOR}.mode"],
    ),
    (
        "validator-mode-matches-attestations",
        lambda d: d["postconditions"][0]["validator"].update(attested=[{"id": "a", "text": "t"}]),
        [f"{B_VALIDATOR}.mode"],
    ),
    (
        "validator-ids-unique",
        lambda d: d["postconditions"][0]["validator"]["predicates"].append(
            {"id": "p1", "kind": "exists", "path": "other"}
        ),
        [B_VALIDATOR],
    ),
    (
        "validator-schema-well-formed",
        lambda d: d["postconditions"][0]["validator"].update(schema={"type": 5}),
        [f"{B_VALIDATOR}.schema"],
    ),
    (
        "fingerprint-present",
        lambda d: d["contract_fingerprints"].pop("d"),
        ["$.contract_fingerprints"],
    ),
    (
        "fingerprint-matches",
        lambda d: d["contract_fingerprints"].update(d=OTHER_FP),
        ["$.contract_fingerprints.d"],
    ),
    (
        "fingerprint-node",
        lambda d: d["contract_fingerprints"].update(ghost=OTHER_FP),
        ["$.contract_fingerprints.ghost"],
    ),
    (
        "no-error-diagnostic",
        lambda d: d["diagnostics"].append({"severity": "error", "message": "x"}),
        ["$.diagnostics[1]"],
    ),
    (
        "diagnostic-source-listed",
        lambda d: d["diagnostics"][0].update(sourcePath="src/zzz.prose.md"),
        ["$.diagnostics[0].sourcePath"],
    ),
]


def broken(change: Callable[[Doc], Any]) -> Doc:
    doc = base()
    change(doc)
    return doc


def test_the_base_manifest_is_valid() -> None:
    assert list(iter_problems(base())) == []
    check(base())
    assert parse_intent(base()).order == ("g", "b", "d")


@pytest.mark.parametrize(("change", "paths"), [pytest.param(c, p, id=rule) for rule, c, p in RULES])
def test_each_rule_reports_exactly_its_problem(
    change: Callable[[Doc], Any], paths: list[str]
) -> None:
    doc = broken(change)
    problems = list(iter_problems(doc))
    assert sorted(p.path for p in problems) == sorted(paths)
    with pytest.raises(IntentError) as raised:
        check(doc, "m.json")
    assert raised.value.problem == problems[0]
    assert str(raised.value) == f"m.json: {problems[0]}"
    with pytest.raises(IntentError) as loading:
        parse_intent(doc)
    assert loading.value.problem == problems[0]


def test_the_cycle_is_named_in_the_direction_truth_flows() -> None:
    (problem,) = iter_problems(broken(cycle))
    assert problem.message.endswith("has a cycle `b` → `d` → `b`")
    (problem,) = iter_problems(broken(cycle_written))
    assert "`b` → `d` → `b`" in problem.message


def test_problems_are_values() -> None:
    first, second = Problem("$.a", "x"), Problem("$.a", "x")
    assert first == second and hash(first) == hash(second)
    assert sorted([Problem("$.b", "a"), Problem("$.a", "z")])[0].path == "$.a"
    with pytest.raises(AttributeError):
        first.path = "$.b"  # type: ignore[misc]
    assert str(first) == "$.a: x"


def test_the_schema_pass_can_be_skipped_but_the_rules_always_run() -> None:
    doc = broken(lambda d: d["topology"]["edges"][0].update(facet="nope"))
    assert [p.path for p in iter_problems(doc, schema=False)] == ["$.topology.edges[0].facet"]
    shapeless = broken(lambda d: d.update(kind="other"))
    assert list(iter_problems(shapeless, schema=False)) == []


def test_a_spec_the_caller_knows_parses_is_not_parsed_again() -> None:
    """`specs_known` (the build: unchanged contracts' specs) spares parsing those specs
    only; every other spec, and the facets check of every entry, still runs."""
    doc = broken(
        lambda d: d["canonicalizers"][2]["spec"]["facets"].append(
            {"facet": "items", "paths": ["other"]}
        )
    )
    node = doc["canonicalizers"][2]["node"]
    assert [p.path for p in iter_problems(doc, schema=False)] == ["$.canonicalizers[2].spec"]
    assert list(iter_problems(doc, schema=False, specs_known={node})) == []
    unlisted = broken(
        lambda d: d["canonicalizers"][0].update(spec={"facets": [{"facet": "x", "paths": ["x"]}]})
    )
    known = {unlisted["canonicalizers"][0]["node"]}
    assert [p.path for p in iter_problems(unlisted, schema=False, specs_known=known)] == [
        "$.canonicalizers[0].spec.facets[0]"
    ]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)
PLACES = [
    (),
    ("topology",),
    ("topology", "nodes"),
    ("topology", "nodes", 0),
    ("topology", "nodes", 0, "node"),
    ("topology", "nodes", 1, "caller_inputs"),
    ("topology", "edges", 0),
    ("topology", "edges", 0, "producer"),
    ("topology", "entry_points"),
    ("topology", "entry_points", 0),
    ("topology", "acyclic"),
    ("canonicalizers", 2, "spec"),
    ("canonicalizers", 2, "facets"),
    ("postconditions", 0, "validator"),
    ("postconditions", 0, "validator", "predicates"),
    ("contract_fingerprints",),
    ("diagnostics", 0),
    ("sources",),
]


@settings(max_examples=200, deadline=None)
@given(place=st.sampled_from(PLACES), value=JSON)
def test_any_document_is_checked_without_raising(place: tuple[Any, ...], value: Any) -> None:
    doc: Any = base()
    if place:
        target = doc
        for key in place[:-1]:
            target = target[key]
        target[place[-1]] = value
    else:
        doc = value
    problems = list(iter_problems(doc))
    assert all(isinstance(p, Problem) for p in problems)


COMBINED = [
    "edge-facet-emitted",
    "external-is-entry-point",
    "canonicalizer-missing",
    "fingerprint-matches",
    "diagnostic-source-listed",
    "acyclic-honest-cycle",
]


def test_validate_and_activate_print_every_problem_and_run_names_the_first(
    tmp_path: Path,
) -> None:
    doc = base()
    for rule, change, _ in RULES:
        if rule in COMBINED:
            change(doc)
    problems = list(iter_problems(doc))
    expected = {path for rule, _, paths in RULES if rule in COMBINED for path in paths}
    assert {p.path for p in problems} == expected
    project = Project.create(tmp_path / "p", doc)
    active, nxt = "dist/manifest.active.json", "dist/manifest.next.json"
    (project.root / nxt).write_bytes((project.root / active).read_bytes())

    listed = project.prosec("validate", active, "--format", "json")
    assert listed.returncode == 1
    assert json.loads(listed.stdout) == [{"path": p.path, "message": p.message} for p in problems]
    text = project.prosec("validate", active)
    assert text.returncode == 1
    assert text.stdout.splitlines() == [f"{active}: {p}" for p in problems]

    activated = project.prosec("activate", ".")
    assert activated.returncode == 1
    assert activated.stdout.splitlines() == [f"{nxt}: {p}" for p in problems]

    run = project.prosec("run", ".")
    assert run.returncode == 2
    assert run.stderr.startswith("prosec: error: ")
    assert run.stderr.endswith(f"manifest.active.json: {problems[0]}\n")
