"""The markdown parser: every construct the upstream programs use, with exact spans."""

from __future__ import annotations

from textwrap import dedent

import pytest
from prosec.compiler.ir import ClauseKind, Contract, ItemStyle, SourceFile, Span
from prosec.compiler.parse import parse_source

PATH = "src/demo.prose.md"


def parse(text: str) -> tuple[SourceFile, list[str]]:
    source, found = parse_source(PATH, dedent(text).lstrip("\n"))
    return source, [d.code for d in found]


def at(line: int, column: int, end_line: int, end_column: int) -> Span:
    return Span(path=PATH, line=line, column=column, end_line=end_line, end_column=end_column)


def only(text: str) -> Contract:
    source, codes = parse(text)
    assert codes == []
    return source.contracts[0]


def test_frontmatter_keys_and_extras_are_kept() -> None:
    contract = only(
        """
        ---
        name: tally
        kind: responsibility
        id: 0ABCDEFGHJKMNPQRSTVWXYZ012
        version: 3
        owner: ops
        ---
        """
    )
    assert (contract.name, contract.kind, contract.id, contract.version) == (
        "tally",
        "responsibility",
        "0ABCDEFGHJKMNPQRSTVWXYZ012",
        "3",
    )
    assert contract.frontmatter["owner"] == "ops"
    assert contract.name_span == at(2, 1, 2, 12)
    assert contract.frontmatter_spans["owner"] == at(6, 1, 6, 11)


def test_test_subject() -> None:
    contract = only("---\nname: t\nkind: test\nsubject: summarizer\n---\n")
    assert contract.subject == "summarizer"


def test_title_and_preamble() -> None:
    contract = only("---\nname: a\nkind: function\n---\n\n# The Title\n\nSome words.\n")
    assert contract.title == "The Title"
    (paragraph,) = contract.preamble.paragraphs
    assert (paragraph.text, paragraph.span) == ("Some words.", at(8, 1, 8, 12))


def test_inline_nodes_split_the_file() -> None:
    source, codes = parse(
        """
        ---
        name: host
        kind: responsibility
        ---

        ### Maintains

        - `x`: a value

        ## helper

        ### Parameters

        - `y`: an input

        ### Returns

        - `z`: an output
        """
    )
    host, helper = source.contracts
    assert codes == []
    assert (host.span, helper.span) == (at(1, 1, 8, 15), at(10, 1, 18, 17))
    assert (helper.name, helper.kind, helper.inline, helper.parent) == (
        "helper",
        "function",
        True,
        "host",
    )
    assert helper.name_span == at(10, 1, 10, 10)
    assert [s.key for s in helper.sections] == ["parameters", "returns"]


@pytest.mark.parametrize(
    ("heading", "key", "value"),
    [
        ("### Continuity: external-driven", "continuity", "external-driven"),
        ("### MAINTAINS", "maintains", ""),
        ("### Expects  Not", "expects not", ""),
        ("### continuity — self-driven", "continuity", "self-driven"),
    ],
)
def test_section_headings(heading: str, key: str, value: str) -> None:
    contract = only(f"---\nname: a\nkind: gateway\n---\n\n{heading}\n")
    (section,) = contract.sections
    assert (section.key, section.value) == (key, value)
    assert section.heading_span == at(6, 1, 6, len(heading) + 1)


def test_facets_under_maintains_with_entities() -> None:
    contract = only(
        """
        ---
        name: a
        kind: gateway
        ---

        ### Maintains

        #### leaf:&lt;id&gt;
        One leaf. Immaterial: `seen_at`.

        #### `totals`
        Sums.
        """
    )
    leaf, totals = contract.facets
    assert (leaf.name, leaf.heading_span, leaf.span) == (
        "leaf:<id>",
        at(8, 1, 8, 21),
        at(8, 1, 9, 33),
    )
    assert leaf.body.clauses[0].kind is ClauseKind.IMMATERIAL
    assert totals.name == "totals"


def test_facet_needs_under_requires() -> None:
    contract = only(
        """
        ---
        name: a
        kind: responsibility
        ---

        ### Requires

        #### funding
        Funding events from `monitor`.
        """
    )
    (need,) = contract.needs
    assert (need.name, need.facet_need, need.span) == ("funding", True, at(8, 1, 9, 31))
    assert need.text == "funding Funding events from `monitor`."


def test_fourth_level_headings_elsewhere_are_documentation() -> None:
    contract = only("---\nname: a\nkind: function\n---\n\n### Returns\n\n#### Notes\n")
    (section,) = contract.sections
    assert [t.text for t in section.body.subheadings] == ["Notes"]


def test_item_shapes() -> None:
    contract = only(
        """
        ---
        name: a
        kind: function
        ---

        ### Returns

        - `colon`: described
        - `dash` — described
        - `alone`
        - bare: described
        - A free sentence about the result.
        - `nested`: parent
          - `child`: described
        """
    )
    items = contract.sections[0].body.items
    assert [(i.name, i.style, i.description) for i in items] == [
        ("colon", ItemStyle.BACKTICK_COLON, "described"),
        ("dash", ItemStyle.BACKTICK_DASH, "described"),
        ("alone", ItemStyle.BACKTICK_ONLY, ""),
        ("bare", ItemStyle.BARE_COLON, "described"),
        (None, ItemStyle.SENTENCE, "A free sentence about the result."),
        ("nested", ItemStyle.BACKTICK_COLON, "parent"),
    ]
    assert items[0].span == at(8, 1, 8, 21)
    assert items[0].name_span == at(8, 4, 8, 9)
    assert items[5].span == at(13, 1, 14, 23)
    (child,) = items[5].children
    assert (child.name, child.span) == ("child", at(14, 3, 14, 23))


def test_clause_bullets_are_not_items() -> None:
    contract = only(
        """
        ---
        name: a
        kind: responsibility
        ---

        ### Maintains

        - `rows`: the rows
        - immaterial: `fetched_at`
        - postcondition: every row has an `id`
        - freshness: rows expire after a day
        """
    )
    body = contract.sections[0].body
    assert [i.name for i in body.items] == ["rows"]
    assert [(c.kind, c.text, c.span) for c in body.clauses] == [
        (ClauseKind.IMMATERIAL, "`fetched_at`", at(9, 1, 9, 27)),
        (ClauseKind.POSTCONDITION, "every row has an `id`", at(10, 1, 10, 39)),
        (ClauseKind.FRESHNESS, "rows expire after a day", at(11, 1, 11, 37)),
    ]


def test_sentence_clauses_in_maintains() -> None:
    contract = only(
        "---\nname: a\nkind: responsibility\n---\n\n### Maintains\n\n"
        "Rows. Postcondition: no duplicates. Material: the `rows` set.\n"
    )
    clauses = contract.sections[0].body.clauses
    assert [(c.kind, c.text, c.bullet) for c in clauses] == [
        (ClauseKind.POSTCONDITION, "no duplicates.", False),
        (ClauseKind.MATERIAL, "the `rows` set.", False),
    ]


def test_bold_pseudo_heading_turns_its_list_into_clauses() -> None:
    contract = only(
        """
        ---
        name: a
        kind: responsibility
        ---

        ### Maintains

        - `rows`: the rows

        **Postconditions**:

        - every row has an owner

        **Register fields**

        - `owner`: who keeps it
        """
    )
    body = contract.sections[0].body
    assert [t.text for t in body.subheadings] == ["Postconditions", "Register fields"]
    assert body.subheadings[0].span == at(10, 1, 10, 20)
    assert [(c.kind, c.text) for c in body.clauses] == [
        (ClauseKind.POSTCONDITION, "every row has an owner")
    ]
    assert [i.name for i in body.items] == ["rows", "owner"]


def test_blockquotes_and_tables_are_prose() -> None:
    contract = only(
        """
        ---
        name: a
        kind: function
        ---

        ### Returns

        > quoted
        > words

        | a | b |
        | --- | --- |
        | 1 | 2 |
        """
    )
    quote, table = contract.sections[0].body.paragraphs
    assert (quote.text, quote.span) == ("quoted words", at(8, 1, 9, 8))
    assert table.span == at(11, 1, 13, 10)
    assert "1" in table.text


def test_fences() -> None:
    source, codes = parse(
        """
        ---
        name: a
        kind: function
        ---

        ### Execution

        ```prose
        return 1
        ```

        ```prosescript
        return 2
        ```

        ```python
        print("### not a heading")
        ```
        """
    )
    assert codes == []
    contract = source.contracts[0]
    assert [s.key for s in contract.sections] == ["execution"]
    fences = contract.sections[0].body.fences
    assert [(f.info, f.span, f.content_line) for f in fences] == [
        ("prose", at(8, 1, 10, 4), 9),
        ("prosescript", at(12, 1, 14, 4), 13),
        ("python", at(16, 1, 18, 4), 17),
    ]
    assert source.fences == fences


def test_yaml_pattern_instance() -> None:
    contract = only(
        """
        ---
        name: a
        kind: responsibility
        ---

        ```yaml
        - name: reviewed
          pattern: std/patterns/worker-critic
          with:
            worker: writer
          config:
            max_rounds: 3
        ```
        """
    )
    (instance,) = contract.pattern_instances
    assert (instance.name, instance.pattern, instance.span) == (
        "reviewed",
        "std/patterns/worker-critic",
        at(6, 1, 13, 4),
    )
    assert instance.bindings == (("worker", "writer"),)
    assert instance.config == (("max_rounds", 3),)


def test_unterminated_fence_and_frontmatter() -> None:
    assert parse("---\nname: a\nkind: function\n---\n\n```\nopen\n")[1] == ["fence_unterminated"]
    assert parse("---\nname: a\nkind: pattern\n")[1] == ["frontmatter_unterminated"]


def test_heading_inside_a_fence_is_not_a_heading() -> None:
    contract = only("---\nname: a\nkind: function\n---\n\n```\n### Returns\n```\n")
    assert contract.sections == ()


def test_crlf_is_normalized() -> None:
    source, _ = parse_source(PATH, "---\r\nname: a\r\nkind: function\r\n---\r\n\r\n### Returns\r\n")
    assert source.text == "---\nname: a\nkind: function\n---\n\n### Returns\n"
    assert source.contracts[0].sections[0].heading_span == at(6, 1, 6, 12)


def test_pseudo_heading_does_not_reach_past_a_section() -> None:
    contract = only(
        "---\nname: a\nkind: responsibility\n---\n\n### Maintains\n\n**Postconditions**:\n\n"
        "### Continuity\n\n- input-driven\n"
    )
    assert [i.text for i in contract.sections[1].body.items] == ["input-driven"]
    assert contract.sections[1].body.clauses == ()


def test_facets_block_folds_into_maintains() -> None:
    contract = only(
        "---\nname: a\nkind: responsibility\n---\n\n### Maintains\n\n- `rows`: rows\n\n"
        "### Facets\n\nNamed parts.\n\n#### totals\nSums.\n"
    )
    assert [f.name for f in contract.facets] == ["totals"]
    assert contract.facets[0].heading_span == at(14, 1, 14, 12)
    assert contract.section("facets") is not None
    assert contract.sections[1].facets == ()


def test_postconditions_block_lists_clauses() -> None:
    contract = only(
        "---\nname: a\nkind: responsibility\n---\n\n### Postconditions\n\n- every row has an owner\n"
    )
    body = contract.sections[0].body
    assert body.items == ()
    assert [(c.kind, c.text) for c in body.clauses] == [
        (ClauseKind.POSTCONDITION, "every row has an owner")
    ]
