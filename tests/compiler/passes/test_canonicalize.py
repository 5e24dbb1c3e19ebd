"""Canonicalizer lowering of `### Maintains`, the structured-backing rule, the facet check."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from prosec.compiler.ir import Edge, Rung
from prosec.compiler.passes import canonicalize

from ..helpers import codes, node, project, wire


def lowered(maintains: str) -> tuple[dict[str, Any], list[str]]:
    contract = project(node("n", maintains=maintains)).contracts[0]
    spec, found = canonicalize.lower(contract)
    return spec.to_json(), codes(found)


def test_no_facets_is_atomic_only() -> None:
    spec, found = lowered("- `value`: the value")
    assert spec == {"default_material": True, "rules": [], "facets": []}
    assert found == []


def test_facets_own_their_key_unless_paths_are_named() -> None:
    spec, _ = lowered(
        "#### funding\n- `events`: rounds\n#### hiring\nPaths: `jobs.open`, `jobs.closed`"
    )
    assert spec["facets"] == [
        {"facet": "funding", "paths": ["funding"]},
        {"facet": "hiring", "paths": ["jobs.open", "jobs.closed"]},
    ]


def test_immaterial_in_the_lead_applies_anywhere_and_in_a_facet_inside_it() -> None:
    spec, found = lowered(
        "Each item keeps a stable `name`; `fetched_at` and `request_id` are immaterial everywhere.\n\n"
        "#### funding\n- `events`: rounds\n- immaterial: `source_url`"
    )
    assert spec["rules"] == [
        {"path": "**.fetched_at", "material": False},
        {"path": "**.request_id", "material": False},
        {"path": "funding.**.source_url", "material": False},
    ]
    assert found == []


def test_material_normalizations() -> None:
    spec, _ = lowered(
        "- Material: `tags` (unordered); `title` case-insensitive\n"
        "- Material: `amount` rounded to 0.5\n"
        "- Material: `body` whitespace-insensitive"
    )
    assert spec["rules"] == [
        {"path": "**.tags", "material": True, "collection": "set"},
        {"path": "**.title", "material": True, "text": {"case_insensitive": True}},
        {"path": "**.amount", "material": True, "number": {"quantum": 0.5}},
        {"path": "**.body", "material": True, "text": {"collapse_whitespace": True}},
    ]


def test_clauses_that_name_no_field_get_a_diagnostic() -> None:
    _, found = lowered("- immaterial: parse timestamps\n- Material: the event set (unordered)")
    assert found == ["clause_unlowered", "clause_unlowered"]


def test_a_material_restatement_without_normalization_is_fine() -> None:
    assert lowered("#### thread\nMaterial: the canonical content of the thread.")[1] == []


def test_explicit_structured_block_replaces_the_lowering() -> None:
    spec, found = lowered(
        "- immaterial: `ignored_by_block`\n\n#### funding\n- `events`: rounds\n\n"
        '```json\n{"canonicalizer": {"default_material": false, "rules": [{"path": "funding.events",'
        ' "material": true, "collection": "set"}], "facets": [{"facet": "funding", "paths":'
        ' ["funding.events"]}]}}\n```'
    )
    assert spec == {
        "default_material": False,
        "rules": [{"path": "funding.events", "material": True, "collection": "set"}],
        "facets": [{"facet": "funding", "paths": ["funding.events"]}],
    }
    assert found == []


def test_invalid_explicit_block_is_an_error() -> None:
    _, found = lowered(
        '```yaml\ncanonicalizer:\n  rules:\n    - {path: "a..b"}\n  facets:\n    - {facet: ghost, paths: [x]}\n```'
    )
    assert found == ["canonicalizer_invalid"]


def test_subscribed_facet_without_structured_backing_warns() -> None:
    producer = node(
        "feed", maintains="#### prose\nNews, like the `data` facet.\n#### data\n- `rows`: rows"
    )
    topology, _ = wire(
        producer,
        node("a", requires="- the `prose` facet of `feed`"),
        node("b", requires="- the `data` facet of `feed`"),
    )
    _, found = canonicalize.run(topology)
    assert codes(found) == ["structured_backing_missing"]
    assert "`prose`" in found[0].message


def test_edge_to_a_facet_the_canonicalizer_does_not_emit_is_an_error() -> None:
    topology, _ = wire(node("p"), node("s", requires="- `value`: from `p`"))
    ghost = Edge(subscriber="s", producer="p", facet="ghost", rung=Rung.PINNED, evidence="test")
    _, found = canonicalize.run(replace(topology, edges=(*topology.edges, ghost)))
    assert codes(found) == ["facet_not_emitted"]


def test_a_json_block_too_deep_or_not_finite_is_not_a_crash() -> None:
    # issue 9: a ```json fence nested 100,000 deep made the canonicalize pass raise
    # RecursionError (build exited 3); the strict reader refuses it like any non-JSON
    deep = "[" * 100_000 + "]" * 100_000
    for content in ('{"canonicalizer": ' + deep + "}", '{"canonicalizer": NaN}', "1e400"):
        spec, found = lowered(f"- `x`: a value\n\n```json\n{content}\n```")
        assert spec == lowered("- `x`: a value")[0]
        assert found == []
