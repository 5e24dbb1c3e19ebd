"""Code actions as values: the lint fixes (as `prosec lint --fix` applies them), `### Tools` (none) and prose.toml pins."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from prosec.compiler.fixes import apply_fixes
from prosec.compiler.ir import Need, Span
from prosec.compiler.lsp import actions
from prosec.compiler.lsp.positions import UTF16, LineIndex, Position, Range

from .helpers import analyse, node, write

ID = re.compile(r"^[0-7][0-9A-HJKMNP-TV-Z]{25}$")


def _apply(text: str, edits: tuple[tuple[Range, str], ...]) -> str:
    lines = text.split("\n")

    def offset(p: Position) -> int:
        return sum(len(line) + 1 for line in lines[: p.line]) + p.character

    for where, new in sorted(edits, key=lambda e: e[0].start, reverse=True):
        text = text[: offset(where.start)] + new + text[offset(where.end) :]
    return text


def _request(display: str, line: int, toml: str | None = None) -> actions.Request:
    return actions.Request(
        display=display,
        start=(line, 1),
        end=(line, 1),
        encoding=UTF16,
        toml_text=toml,
    )


def test_fresh_id_and_retired_section_fixes(tmp_path: Path) -> None:
    text = node("a", body="\n### Maintains\n\nThe truth.\n\n### Constraints\n\n- be kind\n")
    root = write(tmp_path, {"a.prose.md": text})
    _, analysis = analyse(root)
    found = actions.code_actions(analysis, _request("a.prose.md", 2))
    (add_id,) = [a for a in found if a.diagnostic is not None and a.diagnostic.code == "id_missing"]
    fixed = _apply(text, add_id.changes[0].edits)
    # the editor applies exactly the fix `prosec lint --fix` applies (same id, same place)
    assert add_id.diagnostic is not None and add_id.diagnostic.fix is not None
    assert fixed == apply_fixes(text, [add_id.diagnostic]).text
    (new_id,) = re.findall(r"^id: (\S+)$", fixed, re.MULTILINE)
    assert ID.match(new_id) and add_id.title == f"Add `id: {new_id}`"
    line = text.split("\n").index("### Constraints") + 1
    found = actions.code_actions(analysis, _request("a.prose.md", line))
    (rename,) = [a for a in found if a.kind == actions.QUICKFIX]
    assert "\n### Invariants\n" in _apply(text, rename.changes[0].edits)


def test_tools_none_is_offered_only_where_tools_are_undeclared(tmp_path: Path) -> None:
    body = "\n### Returns\n\nA number.\n"
    text = (
        node("f", kind="function", body=body)
        + "\n## helper\n\n### Returns\n\nText.\n\n### Tools\n\n- `cli:gh`\n"
    )
    root = write(tmp_path, {"f.prose.md": text})
    _, analysis = analyse(root)
    (declare,) = actions.code_actions(analysis, _request("f.prose.md", 8))
    assert declare.kind == actions.REWRITE
    fixed = _apply(text, declare.changes[0].edits)
    assert "### Returns\n\nA number.\n\n### Tools\n\n(none)\n\n## helper" in fixed
    helper = text.split("\n").index("## helper") + 1
    assert actions.code_actions(analysis, _request("f.prose.md", helper + 2)) == []


def test_pins_append_to_prose_toml_or_create_it(tmp_path: Path) -> None:
    pin = actions.Pin("outreach", "summary", "market", "summary")
    created = actions.pin_change(tmp_path, None, pin, UTF16)
    assert created is not None and created.create and created.path == tmp_path / "prose.toml"
    data = tomllib.loads(_apply("", created.edits))
    assert data["wiring"]["pin"] == [
        {"subscriber": "outreach", "need": "summary", "producer": "market", "facet": "summary"}
    ]
    existing = "[lint]\nstrict = true"
    changed = actions.pin_change(tmp_path, existing, pin, UTF16)
    assert changed is not None and not changed.create
    text = _apply(existing, changed.edits)
    assert text.startswith(existing + "\n\n[[wiring.pin]]\n")
    assert tomllib.loads(text)["lint"] == {"strict": True}


def test_pins_never_break_prose_toml() -> None:
    inline = '[wiring]\npin = [{ subscriber = "a", need = "b", producer = "c" }]\n'
    pin = actions.Pin("s", 'the "odd" \\ need', "p", "f")
    assert actions.pin_change(Path("."), inline, pin, UTF16) is None
    change = actions.pin_change(Path("."), "", pin, UTF16)
    assert change is not None
    assert tomllib.loads(_apply("", change.edits))["wiring"]["pin"][0]["need"] == pin.need


def test_pin_keys_name_the_need_or_its_position() -> None:
    span = Span(path="a", line=1, column=1, end_line=1, end_column=2)
    named = Need(name="summary", text="summary", span=span)
    other = Need(
        name=None,
        text="the weather",
        span=Span(path="a", line=2, column=1, end_line=2, end_column=2),
    )
    assert actions.pin_key(named, (named, other)) == "summary"
    assert actions.pin_key(other, (named, other)) == "#2"


def test_qualifiers_name_the_producer_and_facet() -> None:
    text = "- `summary`: the summary\n  to open with"
    span = Span(path="a", line=1, column=1, end_line=2, end_column=15)
    need = Need(name="summary", text="", span=span)
    edit = actions.qualifier_edit(need, "market", "summary", LineIndex(text))
    assert (
        _apply(text, (edit,)) == "- `summary`: the summary (from `market.summary`)\n  to open with"
    )
    edit = actions.qualifier_edit(need, "market", "@atomic", LineIndex(text))
    assert "(from `market` via @atomic)" in _apply(text, (edit,))
    heading = Need(name="summary", text="", span=span, facet_need=True)
    facet_text = "#### summary\nText."
    edit = actions.qualifier_edit(heading, "market", "summary", LineIndex(facet_text))
    assert _apply(facet_text, (edit,)) == "#### summary\n\nFrom `market.summary`.\nText."
