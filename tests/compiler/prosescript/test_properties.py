"""Property tests: no input makes the ProseScript parser raise, and every span stays in the fence."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prosec.compiler.ir import Fence, Span
from prosec.compiler.prosescript.checks import check_structure, nodes
from prosec.compiler.prosescript.names import check_names
from prosec.compiler.prosescript.parse import parse_script
from prosec.compiler.prosescript.scope import ContractScope

CONTENT_LINE = 7
COLUMN = 3  # the fence sits in a list item, so every column is shifted

# pieces that make the parser reach deep states more often than random characters would
PIECES = [
    "let ",
    "const ",
    "call ",
    "session ",
    "resume: ",
    "do ",
    "parallel",
    " for ",
    " in ",
    "repeat ",
    "loop ",
    "until ",
    "while ",
    "(max: 3)",
    "if ",
    "elif ",
    "else",
    "choice ",
    "option ",
    "try",
    "catch as e",
    "finally",
    "throw",
    "return ",
    "use ",
    "agent ",
    "block ",
    " as ",
    "input ",
    "output ",
    ":",
    "=",
    ",",
    ".",
    "|",
    " map:",
    " reduce(a, b):",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    '"',
    '"""',
    "**",
    "***",
    "#",
    "\\",
    "\n",
    "\n  ",
    "\n    ",
    "\t",
    "name",
    "x-y",
    "item",
    "3",
    "-1.5",
    "true",
    "null",
    " ",
    "{topic}",
    # the forms beyond the reference grammar
    "f(",
    "read_world_model(",
    "key: ",
    "[0]",
    "[i]",
    "append ",
    " to ",
    "record ",
    "break",
    "continue",
    "filter ",
    " where ",
    "write_world_model ",
    " with ",
    "session task(",
    "do b(",
]

SCOPE = ContractScope(
    inputs=("topic",), call_targets=frozenset({"helper"}), check_calls=True, kind="function"
)


def make_fence(content: str) -> Fence:
    lines = content.count("\n") + 1
    span = Span(
        path="p.prose.md",
        line=CONTENT_LINE - 1,
        column=COLUMN,
        end_line=CONTENT_LINE + lines,
        end_column=COLUMN + 3,
    )
    return Fence(info="prose", content=content, span=span, content_line=CONTENT_LINE)


def assert_never_raises_and_spans_fit(content: str) -> None:
    fence = make_fence(content)
    script, found = parse_script(fence, "p.prose.md")
    last_line = CONTENT_LINE + content.count("\n") + 1
    for diagnostic in found:
        span = diagnostic.span
        assert diagnostic.code == "prosescript_syntax"
        assert CONTENT_LINE <= span.line <= span.end_line <= last_line
        assert span.column >= COLUMN and span.end_column >= 1
    if script is None:
        assert len(found) == 1
        return
    assert found == []
    for diagnostic in check_structure(script) + check_names(script, SCOPE):
        assert CONTENT_LINE <= diagnostic.span.line <= last_line
    for node in nodes(script.statements):
        span = getattr(node, "span")  # noqa: B009 - every IR node has one
        assert CONTENT_LINE <= span.line <= span.end_line <= last_line


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_arbitrary_text_never_raises(content: str) -> None:
    assert_never_raises_and_spans_fit(content)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_token_soup_never_raises(content: str) -> None:
    assert_never_raises_and_spans_fit(content)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=3),
            st.sampled_from(
                [
                    "let a = call helper",
                    "topic: topic",
                    "if a holds:",
                    "loop until done (max: 2):",
                    "return { a, b: [1, 2] }",
                    "parallel:",
                    "for x in topic:",
                    "try:",
                    "catch as e:",
                    "throw",
                    "a = 1",
                    "let b = read_world_model(topic)",
                    "a[0] = f(topic, n: 1)",
                    "append topic to a",
                    "record a[0] in b",
                    "append a b",
                    "break",
                    "continue",
                    "let c = filter a where item is new",
                    "write_world_model { a, b }",
                    "let d = call helper(a) with { b }",
                    "let e = session task(a)",
                    "parallel for x in topic:",
                ]
            ),
        ),
        max_size=12,
    )
)
def test_indented_programs_never_raise(lines: list[tuple[int, str]]) -> None:
    assert_never_raises_and_spans_fit("\n".join("  " * depth + text for depth, text in lines))


SIMPLE = [
    "let a = read_world_model(topic)",
    "a[0] = f(topic, n: 1)",
    "a[0].b = max(1, 2)",
    "append topic to a",
    "record { x: a[1] } in b",
    "append a b",
    "let c = filter a where item.at > 3",
    "write_world_model { a, b }",
    "write_world_model(a)",
    "let d = call helper(a) with { b }",
    "let e = session task(a, b: c)",
    "notify(a)",
    "let g = do blk(a, y: 2)",
]
LOOP_ONLY = ["break", "continue"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(SIMPLE).map(lambda line: [line]),
            st.lists(st.sampled_from(SIMPLE + LOOP_ONLY), min_size=1, max_size=4).map(
                lambda body: [
                    'for x in topic (on-fail: "continue"):',
                    *("  " + line for line in body),
                ]
            ),
        ),
        max_size=8,
    )
)
def test_well_formed_programs_of_the_new_forms_parse(blocks: list[list[str]]) -> None:
    content = "\n".join(line for block in blocks for line in block)
    script, found = parse_script(make_fence(content), "p.prose.md")
    assert found == [] and script is not None
    assert len(script.statements) == len(blocks)
    assert_never_raises_and_spans_fit(content)
