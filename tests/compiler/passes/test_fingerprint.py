"""Contract fingerprints move with meaning, not with layout."""

from __future__ import annotations

import re

from prosec.compiler.passes import fingerprint

from ..helpers import node, project

BASE = node(
    "n",
    requires="- `funding`: a current view of competitor funding events",
    maintains="""
    A current, corroborated view of each competitor; `fetched_at` is immaterial.

    - `name`: the stable name
      - `aliases`: other names
    #### funding
    Funding events per competitor. Material: `events` (unordered).
    """,
    extra="### Continuity\n\n- self-driven: re-check every 6h\n\n### Execution\n\n```prose\nlet x = call y\n  a: b\nreturn x\n```",
)


def fp(text: str) -> str:
    return fingerprint.fingerprint(project(("src/n.prose.md", text)).contracts[0])


def test_reflow_and_indentation_do_not_move_it() -> None:
    _, text = BASE
    reflowed = text.replace("A current, corroborated view", "A current,\ncorroborated\nview")
    reflowed = reflowed.replace("  - `aliases`", "    - `aliases`")
    reflowed = reflowed.replace("- `funding`: a current view", "- `funding`:   a current\n  view")
    reflowed = reflowed.replace("  a: b\n", "  a: b   \n\n")
    assert reflowed != text
    assert fp(reflowed) == fp(text)


def test_layout_of_item_style_does_not_move_it() -> None:
    _, text = BASE
    assert fp(text.replace("- `name`: the stable name", "- `name` — the stable name")) == fp(text)


def test_a_changed_word_moves_it() -> None:
    _, text = BASE
    base = fp(text)
    for old, new in (
        ("funding events", "hiring events"),
        ("stable name", "display name"),
        ("every 6h", "every 12h"),
        ("a: b", "a: c"),
        ("`fetched_at`", "`parsed_at`"),
    ):
        assert fp(text.replace(old, new, 1)) != base, old


def test_identity_and_kind_move_it() -> None:
    _, text = BASE
    base = fp(text)
    assert fp(re.sub(r"id: \w+", "id: 0" + "A" * 25, text)) != base
    assert fp(text.replace("name: n", "name: m")) != base


def test_token_shape() -> None:
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", fp(BASE[1]))
