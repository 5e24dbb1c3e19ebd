"""ProseScript parsing: every construct of the language reference, file positions, syntax errors."""

from __future__ import annotations

import textwrap

import pytest
from prosec.compiler.diagnostics import Diagnostic
from prosec.compiler.ir import Fence, Span
from prosec.compiler.parse import parse_source
from prosec.compiler.prosescript import parse as ps
from prosec.compiler.prosescript.ir import (
    AgentDef,
    ArrayExpr,
    Assign,
    BlockDef,
    Choice,
    Constant,
    DiscretionStyle,
    DoBlock,
    DoCall,
    ExprStmt,
    For,
    If,
    Invocation,
    InvocationKind,
    LegacyIO,
    Let,
    Loop,
    LoopKind,
    Number,
    ObjectExpr,
    Parallel,
    PipeKind,
    Pipeline,
    Ref,
    Repeat,
    Return,
    Script,
    StringLit,
    Throw,
    Try,
    Use,
)

PATH = "demo.prose.md"


def fence(source: str, *, content_line: int = 2, column: int = 1) -> Fence:
    content = textwrap.dedent(source).lstrip("\n")
    lines = content.count("\n")
    span = Span(
        path=PATH, line=content_line - 1, column=column, end_line=content_line + lines, end_column=4
    )
    return Fence(info="prose", content=content, span=span, content_line=content_line)


def parse(source: str) -> Script:
    script, found = ps.parse_script(fence(source), PATH)
    assert found == [], [d.message for d in found]
    assert script is not None
    return script


def error(source: str) -> Diagnostic:
    script, found = ps.parse_script(fence(source), PATH)
    assert script is None
    assert [d.code for d in found] == ["prosescript_syntax"]
    return found[0]


# -- declarations -----------------------------------------------------------------------------


def test_use_with_and_without_alias() -> None:
    first, second = parse(
        """
        use "github.com/openprose/prose/packages/std/evals/inspector" as inspector
        use "std/memory/project-memory"
        """
    ).statements
    assert isinstance(first, Use) and first.alias is not None
    assert first.alias.text == "inspector"
    assert first.source.value.endswith("/inspector")
    assert isinstance(second, Use) and second.alias is None


def test_agent_definition_with_nested_shape() -> None:
    (agent,) = parse(
        """
        agent researcher:
          model: sonnet
          persist: project
          prompt: "Research thoroughly."
          skills: ["web-search"]
          shape:
            self: ["research", "source evaluation"]
            prohibited: ["running shell commands"]
        """
    ).statements
    assert isinstance(agent, AgentDef)
    keys = [p.key.text for p in agent.properties]
    assert keys == ["model", "persist", "prompt", "skills", "shape"]
    shape = agent.properties[-1]
    assert shape.value is None
    assert [c.key.text for c in shape.children] == ["self", "prohibited"]
    assert isinstance(agent.properties[3].value, ArrayExpr)


def test_block_definition_and_do_forms() -> None:
    block, call, anonymous, bare = parse(
        """
        block review-and-fix(artifact, max_rounds):
          let review = call critic
            artifact: artifact
          return artifact

        let result = do review-and-fix(draft, 3)
        let initial = do:
          call drafter
        do review-and-fix
        """
    ).statements
    assert isinstance(block, BlockDef)
    assert [p.text for p in block.params] == ["artifact", "max_rounds"]
    assert isinstance(call, Let) and isinstance(call.value, DoCall)
    assert call.value.args is not None and len(call.value.args) == 2
    assert isinstance(anonymous, Let) and isinstance(anonymous.value, DoBlock)
    assert isinstance(bare, ExprStmt) and isinstance(bare.value, DoCall)
    assert bare.value.args is None


# -- bindings ---------------------------------------------------------------------------------


def test_let_const_destructuring_and_assignment() -> None:
    let, const, destructure, assign = parse(
        """
        let draft = call writer
          brief: brief
        const threshold = "high confidence"
        let { findings, sources } = call researcher
          topic: topic
        draft.status = "done"
        """
    ).statements
    assert isinstance(let, Let) and not let.const and not let.destructured
    assert isinstance(const, Let) and const.const
    assert isinstance(destructure, Let) and destructure.destructured
    assert [n.text for n in destructure.names] == ["findings", "sources"]
    assert isinstance(assign, Assign) and assign.target.parts == ("draft", "status")


def test_references_with_dots_and_dashes() -> None:
    (let,) = parse("let x = index_result.prior-inspections\n").statements
    assert isinstance(let, Let) and isinstance(let.value, Ref)
    assert let.value.parts == ("index_result", "prior-inspections")


def test_literals() -> None:
    values = [
        s.value
        for s in parse(
            """
            let a = 3
            let b = -1.5
            let c = true
            let d = null
            let e = []
            let f = {}
            """
        ).statements
        if isinstance(s, Let)
    ]
    assert isinstance(values[0], Number) and values[0].value == 3
    assert isinstance(values[1], Number) and values[1].value == -1.5
    assert isinstance(values[2], Constant) and values[2].value is True
    assert isinstance(values[3], Constant) and values[3].value is None
    assert isinstance(values[4], ArrayExpr) and values[4].items == ()
    assert isinstance(values[5], ObjectExpr) and values[5].entries == ()


def test_objects_shorthand_multiline_and_without_commas() -> None:
    first, second = parse(
        """
        let context = { brief, findings: findings, depth: "deep" }
        return {
          result: {
            output: current
            final_feedback: final_review
          },
          trailing: 1,
        }
        """
    ).statements
    assert isinstance(first, Let) and isinstance(first.value, ObjectExpr)
    assert [(e.key.text, e.shorthand) for e in first.value.entries] == [
        ("brief", True),
        ("findings", False),
        ("depth", False),
    ]
    assert isinstance(second, Return) and isinstance(second.value, ObjectExpr)
    inner = second.value.entries[0].value
    assert isinstance(inner, ObjectExpr) and len(inner.entries) == 2


# -- invocations ------------------------------------------------------------------------------


def test_call_forms() -> None:
    plain, string, path, modifiers = parse(
        """
        call next-step
        let a = call "std/evals/inspector"
          run-path: run_path
        call std/evals/inspector
        let response = call external-api
          request: request
          retry: 3
          backoff: exponential
        """
    ).statements
    assert isinstance(plain, ExprStmt) and isinstance(plain.value, Invocation)
    assert plain.value.kind is InvocationKind.CALL and plain.value.properties == ()
    assert isinstance(string, Let) and isinstance(string.value, Invocation)
    assert string.value.target_is_string
    assert isinstance(path, ExprStmt) and isinstance(path.value, Invocation)
    assert path.value.target is not None and path.value.target.text == "std/evals/inspector"
    assert isinstance(modifiers, Let) and isinstance(modifiers.value, Invocation)
    assert [p.key.text for p in modifiers.value.properties] == ["request", "retry", "backoff"]


def test_session_and_resume_forms() -> None:
    statements = parse(
        """
        session "Summarize {topic} for {audience}"
        let findings = session: researcher
          prompt: "Research {topic}"
          context: [brief, findings]
        let labelled = session reviewer-one: researcher
        let review = resume: researcher
          context: { findings }
        """
    ).statements
    prompt = statements[0]
    assert isinstance(prompt, ExprStmt) and isinstance(prompt.value, Invocation)
    assert prompt.value.prompt is not None
    assert [i.parts for i in prompt.value.prompt.interpolations] == [("topic",), ("audience",)]
    agent, labelled, resume = (s.value for s in statements[1:] if isinstance(s, Let))
    assert isinstance(agent, Invocation) and agent.target is not None
    assert agent.kind is InvocationKind.SESSION and agent.target.text == "researcher"
    assert isinstance(labelled, Invocation) and labelled.label is not None
    assert labelled.label.text == "reviewer-one"
    assert isinstance(resume, Invocation) and resume.kind is InvocationKind.RESUME


# -- control flow -----------------------------------------------------------------------------


def test_parallel_block_with_modifiers() -> None:
    (block,) = parse(
        """
        parallel ("any", count: 2, on-fail: "continue"):
          let security = call security-reviewer
            code: code
          let style = call style-reviewer
            code: code
        """
    ).statements
    assert isinstance(block, Parallel)
    assert [(m.key.text if m.key else None) for m in block.modifiers] == [None, "count", "on-fail"]
    assert len(block.body) == 2


def test_repeat_for_and_parallel_forms() -> None:
    statements = parse(
        """
        repeat 3 as attempt:
          call generator
        for item, i in items:
          call processor
        parallel for item in items ("first"):
          call processor
        let results = parallel for chunk, index in chunks:
          call mapper
        let samples = parallel repeat sample_size:
          call probe
        let a = repeat readers:
          call reader
        """
    ).statements
    repeat, for_loop, parallel_for = statements[:3]
    assert isinstance(repeat, Repeat) and repeat.alias is not None and not repeat.parallel
    assert isinstance(for_loop, For) and [n.text for n in for_loop.names] == ["item", "i"]
    assert isinstance(parallel_for, For) and parallel_for.parallel
    assert len(parallel_for.modifiers) == 1
    bound = [s.value for s in statements[3:] if isinstance(s, Let)]
    assert isinstance(bound[0], For) and bound[0].parallel
    assert isinstance(bound[1], Repeat) and bound[1].parallel
    assert isinstance(bound[2], Repeat) and isinstance(bound[2].count, Ref)


def test_loop_forms() -> None:
    open_loop, until, while_loop, for_each, bold, triple = parse(
        """
        loop (max: 20):
          call next-step
        loop until all tests pass (max: 5):
          call tester
        loop while more pages remain (max: 50) as page:
          call scraper
        loop for each item in model-produced-items (max: 20):
          call processor
        loop until **editor approves: no notes left** (max: config.max_rounds):
          call editor
        loop until ***
          the critic accepts
          and the budget holds
        ***:
          call critic
        """
    ).statements
    assert isinstance(open_loop, Loop) and open_loop.kind is LoopKind.OPEN
    assert isinstance(open_loop.max, Number) and open_loop.max.value == 20
    assert isinstance(until, Loop) and until.condition is not None
    assert until.condition.text == "all tests pass"
    assert isinstance(while_loop, Loop) and while_loop.kind is LoopKind.WHILE
    assert while_loop.alias is not None and while_loop.alias.text == "page"
    assert while_loop.condition is not None
    assert while_loop.condition.text == "more pages remain"
    assert isinstance(for_each, Loop) and for_each.kind is LoopKind.FOR_EACH
    assert for_each.item is not None and isinstance(for_each.iterable, Ref)
    assert isinstance(bold, Loop) and bold.condition is not None
    assert bold.condition.style is DiscretionStyle.BOLD
    assert bold.condition.text == "editor approves: no notes left"
    assert isinstance(bold.max, Ref)
    assert isinstance(triple, Loop) and triple.condition is not None and triple.max is None
    assert triple.condition.style is DiscretionStyle.TRIPLE
    assert triple.condition.text == "the critic accepts and the budget holds"


def test_if_elif_else_and_discretion_styles() -> None:
    (statement,) = parse(
        """
        if review has critical concerns:
          call reviser
        elif **review has minor concerns**:
          call polisher
        else:
          call approver
        """
    ).statements
    assert isinstance(statement, If)
    conditions = [b.condition for b in statement.branches]
    assert conditions[0] is not None and conditions[0].style is DiscretionStyle.BARE
    assert conditions[1] is not None and conditions[1].text == "review has minor concerns"
    assert conditions[2] is None


def test_choice_with_options() -> None:
    (choice,) = parse(
        """
        choice best recovery path:
          option "retry":
            call retryer
          option "abort":
            throw "No safe recovery path"
        """
    ).statements
    assert isinstance(choice, Choice)
    assert choice.criteria.text == "best recovery path"
    assert [o.label.value for o in choice.options] == ["retry", "abort"]


def test_try_catch_finally_and_throw() -> None:
    (statement,) = parse(
        """
        try:
          call external-api
        catch as err:
          if err is recoverable:
            call fallback
          else:
            throw err
        finally:
          call cleanup
        """
    ).statements
    assert isinstance(statement, Try)
    assert statement.catch is not None and statement.catch.name is not None
    assert statement.finally_body is not None
    rethrow = parse("try:\n  call a\ncatch:\n  throw\n").statements[0]
    assert isinstance(rethrow, Try) and rethrow.catch is not None and rethrow.catch.name is None
    (bare,) = rethrow.catch.body
    assert isinstance(bare, Throw) and bare.value is None


def test_return_forms() -> None:
    bare, value, obj, call = parse(
        """
        return
        return report
        return {
          report: report
          sources: sources
        }
        return call fixer
          artifact: artifact
        """
    ).statements
    assert isinstance(bare, Return) and bare.value is None
    assert isinstance(value, Return) and isinstance(value.value, Ref)
    assert isinstance(obj, Return) and isinstance(obj.value, ObjectExpr)
    assert isinstance(call, Return) and isinstance(call.value, Invocation)
    assert len(call.value.properties) == 1


def test_pipelines() -> None:
    indented, inline = parse(
        """
        let summaries = articles
          | filter:
              call relevance-checker
                article: item
          | pmap:
              call summarizer
                article: item
          | reduce(combined, summary):
              call combiner
                combined: combined
        let names = people | map:
          return item.name
        """
    ).statements
    assert isinstance(indented, Let) and isinstance(indented.value, Pipeline)
    kinds = [op.kind for op in indented.value.ops]
    assert kinds == [PipeKind.FILTER, PipeKind.PMAP, PipeKind.REDUCE]
    assert [n.text for n in indented.value.ops[2].names] == ["combined", "summary"]
    assert isinstance(inline, Let) and isinstance(inline.value, Pipeline)
    assert inline.value.ops[0].kind is PipeKind.MAP


def test_strings_triple_quoted_escapes_and_interpolation() -> None:
    (let,) = parse(
        '''
        let prompt = """
        Inputs:
        - Topic: {topic}
        - Literal: \\{not} {} { spaced } and a quote \\" here
        """
        '''
    ).statements
    assert isinstance(let, Let) and isinstance(let.value, StringLit)
    string = let.value
    assert string.triple
    assert [i.parts for i in string.interpolations] == [("topic",)]
    assert "{not}" in string.value and '"' in string.value
    interpolation = string.interpolations[0]
    assert (interpolation.span.line, interpolation.span.column) == (4, 11)
    (escaped,) = parse('let a = "tab\\tnew\\nline {a.b} \\q"\n').statements
    assert isinstance(escaped, Let) and isinstance(escaped.value, StringLit)
    assert escaped.value.value.startswith("tab\tnew\nline")
    assert [e for e, _ in escaped.value.bad_escapes] == ["\\q"]


def test_comments_everywhere() -> None:
    statements = parse(
        """
        # Gather evidence before synthesis.
        let evidence = call researcher  # inline comment
          topic: topic
        # a comment at column 1 inside a block does not end it
        if evidence is thin:
          call a
        # between
          call b
        """
    ).statements
    assert len(statements) == 2
    branch = statements[1]
    assert isinstance(branch, If) and len(branch.branches[0].body) == 2


def test_legacy_input_and_output() -> None:
    first, second = parse('input topic: "What to research"\noutput report = draft\n').statements
    assert isinstance(first, LegacyIO) and first.direction.value == "input"
    assert isinstance(second, LegacyIO) and second.direction.value == "output"


def test_contextual_keywords_stay_names_elsewhere() -> None:
    (call,) = parse(
        """
        call stage
          input: current_input
          max: 3
          for: everyone
        """
    ).statements
    assert isinstance(call, ExprStmt) and isinstance(call.value, Invocation)
    assert [p.key.text for p in call.value.properties] == ["input", "max", "for"]


# -- positions --------------------------------------------------------------------------------


def test_spans_are_file_positions() -> None:
    script, _ = ps.parse_script(fence("let a = 1\nlet bee = call x\n", content_line=10), PATH)
    assert script is not None
    second = script.statements[1]
    assert isinstance(second, Let)
    assert (second.span.line, second.span.column) == (11, 1)
    assert (second.names[0].span.line, second.names[0].span.column) == (11, 5)
    assert second.names[0].span.end_column == 8
    assert (script.span.line, script.span.end_line) == (10, 11)


def test_spans_follow_an_indented_fence_in_a_list_item() -> None:
    text = (
        "---\nname: demo\nkind: function\n---\n\n### Execution\n\n"
        "- the steps:\n\n  ```prose\n  let a = call x\n    b: c\n  ```\n"
    )
    source, _ = parse_source(PATH, text)
    (prose,) = [f for f in source.fences if f.info == "prose"]
    script, found = ps.parse_script(prose, PATH)
    assert found == [] and script is not None
    let = script.statements[0]
    assert isinstance(let, Let) and isinstance(let.value, Invocation)
    assert text.split("\n")[let.span.line - 1][let.span.column - 1 :].startswith("let a")
    key = let.value.properties[0].key
    assert text.split("\n")[key.span.line - 1][key.span.column - 1 :].startswith("b: c")


def test_span_of_a_multi_line_statement_ends_at_its_last_token() -> None:
    (call,) = parse("call a\n  b: c\n\n\n").statements
    assert (call.span.line, call.span.end_line, call.span.end_column) == (2, 3, 7)


# -- syntax errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "line", "column"),
    [
        ("let x = 1\nlet y = session extract (subject)\n", 3, 25),  # `(` apart from a name
        ("if something holds\n  call a\n", 2, 19),  # missing colon: end of line
        ("let a = call x\n    b: c\n  d: e\n", 4, 3),  # dedent to no block
        ('let a = "unterminated\ncall b\n', 2, 9),
        ("repeat 3:\ncall a\n", 3, 1),  # the body is not indented
        ("if x:\n    call a\n  call b\n", 4, 3),
        ("record item into list\n", 2, 13),  # `record` takes `in`
        ("append xs [1]\n", 2, 14),  # `xs[1]` is an item: `append xs[1] to …`
        ("let a = filter xs where\n", 2, 16),  # no condition: `filter` is a plain name
        ("continue 2\n", 2, 10),
        ("parallel:\n", 2, 10),  # a header with no body at the end of the script
    ],
)
def test_error_positions(source: str, line: int, column: int) -> None:
    diagnostic = error(source)
    assert (diagnostic.span.line, diagnostic.span.column) == (line, column)


def test_error_messages_use_words_not_terminal_names() -> None:
    sources = [
        "let x = session extract (subject)\n",
        "record item into list\n",
        "let a = f(b c)\n",
        "if x\n",
        "loop until:\n  call a\n",
        "let = 3\n",
        "call\n",
        "parallel (\n",
        "try:\n  call a\nelse:\n  call b\n",
        "let a = {\n",
    ]
    for source in sources:
        message = error(source).message
        assert message.startswith("unexpected ")
        for internal in ("_NL", "_INDENT", "_DEDENT", "$END", "__ANON", "LPAR", "Token(", "NAME"):
            assert internal not in message, message


def test_tabs_in_indentation_are_an_error() -> None:
    found = error("if x:\n  \tcall a\n")
    assert (found.span.line, found.span.column) == (3, 3)
    assert "tab" in found.message


def test_hints_for_constructs_outside_the_grammar() -> None:
    assert "without the space" in error("let r = call registry (subject)\n").message
    assert "without the space" in error("summarize (topic)\n").message
    assert "`proceed` is not a ProseScript statement" in error("proceed\n").message
    assert "needs a condition" in error("let a = filter xs where\n").message


# -- the shipped parse table ------------------------------------------------------------------


def test_shipped_table_matches_the_grammar() -> None:
    # regenerate with `make grammar` after editing grammar.lark
    assert ps.read_table() is not None


def test_table_and_fresh_build_parse_alike() -> None:
    source = "let a = call b\n  c: [d, {e}]\nloop until done (max: 2):\n  a = 1\n"
    table = ps.read_table()
    assert table is not None
    assert table.parse(source) == ps.build_parser().parse(source)
