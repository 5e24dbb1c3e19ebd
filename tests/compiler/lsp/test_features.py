"""Hover, completion and symbols over lint-only facts (no wiring involved)."""

from __future__ import annotations

from pathlib import Path

from prosec.compiler.lsp import completion, hover, navigation

from .helpers import analyse, node, write

BODY = """
### Goal

Keep it current.

### Requires

- `summary`: the summary

### Maintains

#### summary
Short.

### Ensures

- done

### Parameters

- `x`: an input

### Notes

Free text.
"""


def _line(text: str, content: str) -> int:
    return text.split("\n").index(content) + 1


def test_section_hover_explains_meaning_kinds_and_retirement(tmp_path: Path) -> None:
    text = node("a", body=BODY)
    root = write(tmp_path, {"a.prose.md": text})
    _, analysis = analyse(root)
    goal = hover.hover(analysis, "a.prose.md", _line(text, "### Goal"), 3)
    assert goal is not None and "Applies to: responsibility, gateway." in goal.markdown
    assert goal.span.line == _line(text, "### Goal")
    ensures = hover.hover(analysis, "a.prose.md", _line(text, "### Ensures"), 5)
    assert ensures is not None and "rename it to `### Maintains`" in ensures.markdown
    params = hover.hover(analysis, "a.prose.md", _line(text, "### Parameters"), 5)
    assert params is not None and "does not apply to it" in params.markdown
    notes = hover.hover(analysis, "a.prose.md", _line(text, "### Notes"), 5)
    assert notes is not None and "Not an OpenProse section" in notes.markdown
    assert hover.hover(analysis, "a.prose.md", _line(text, "Keep it current."), 3) is None
    name = hover.hover(analysis, "a.prose.md", 2, 3)
    assert name is not None and name.markdown.startswith("**responsibility** `a`")


def test_wiring_hovers_say_when_wiring_is_unavailable(tmp_path: Path) -> None:
    text = node("a", body=BODY)
    root = write(tmp_path, {"a.prose.md": text})
    _, analysis = analyse(root)
    need = hover.hover(analysis, "a.prose.md", _line(text, "- `summary`: the summary"), 5)
    assert need is not None and "not available" in need.markdown
    facet = hover.hover(analysis, "a.prose.md", _line(text, "#### summary"), 6)
    assert facet is not None and facet.markdown.startswith("**Facet** `summary` of `a`")


def test_section_completion_respects_kind_and_present_sections(tmp_path: Path) -> None:
    text = node("g", kind="gateway", body="\n### Maintains\n\nX.\n\n### Re")
    root = write(tmp_path, {"g.prose.md": text})
    _, analysis = analyse(root)
    line = len(text.split("\n"))
    items = completion.complete(analysis, "g.prose.md", line, len("### Re") + 1)
    labels = [i.label for i in items]
    assert labels[:3] == ["Description", "Goal", "Continuity"]
    assert "Receives" in labels and "Requires" not in labels and "Maintains" not in labels
    (receives,) = [i for i in items if i.label == "Receives"]
    assert (receives.replace.column, receives.replace.end_column) == (5, 7)
    assert receives.new_text == "Receives"


def test_heading_without_space_gets_one(tmp_path: Path) -> None:
    text = node("f", kind="function", body="\n###")
    root = write(tmp_path, {"f.prose.md": text})
    _, analysis = analyse(root)
    line = len(text.split("\n"))
    items = completion.complete(analysis, "f.prose.md", line, 4)
    assert {i.new_text for i in items} >= {" Returns", " Parameters"}
    assert completion.complete(analysis, "f.prose.md", line - 1, 1) == []


def test_document_symbols_nest_sections_facets_and_needs(tmp_path: Path) -> None:
    text = node("a", body=BODY) + "\n## inline\n\n### Returns\n\nA value.\n"
    root = write(tmp_path, {"a.prose.md": text})
    _, analysis = analyse(root)
    source = analysis.source("a.prose.md")
    assert source is not None
    top, inline = navigation.document_symbols(source)
    assert (top.name, top.kind, inline.name, inline.kind) == (
        "a",
        "responsibility",
        "inline",
        "function",
    )
    assert [s.name for s in top.children] == [
        "Goal",
        "Requires",
        "Maintains",
        "Ensures",
        "Parameters",
        "Notes",
    ]
    assert [(c.name, c.kind) for c in top.children[1].children] == [("summary", "need")]
    assert [(c.name, c.kind) for c in top.children[2].children] == [("summary", "facet")]
    for symbol in (top, inline, *top.children):
        assert symbol.span.contains(symbol.selection)


def test_workspace_symbols_match_fuzzily_across_projects(tmp_path: Path) -> None:
    one = write(tmp_path / "one", {"decisions-log.prose.md": node("decisions-log")})
    two = write(tmp_path / "two", {"daily-digest.prose.md": node("daily-digest")})
    _, first = analyse(one)
    _, second = analyse(two)
    found = navigation.workspace_symbols([first, second], "dlog")
    assert [s.name for _, s in found] == ["decisions-log"]
    found = navigation.workspace_symbols([second, first], "d")
    assert [s.name for _, s in found] == ["daily-digest", "decisions-log"]


def test_continuity_hover_says_how_it_was_read(tmp_path: Path) -> None:
    text = node(
        "a", body="\n### Maintains\n\nX.\n\n### Continuity\n\n- self-driven: every 6 hours\n"
    )
    root = write(tmp_path, {"a.prose.md": text})
    _, analysis = analyse(root)
    found = hover.hover(analysis, "a.prose.md", _line(text, "### Continuity"), 5)
    assert found is not None and "Read as: **self-driven**, cadence `PT6H`." in found.markdown
