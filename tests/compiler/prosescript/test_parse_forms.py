"""ProseScript beyond the reference grammar: the forms upstream programs write, as typed IR."""

from __future__ import annotations

import logging

from lark import Lark, logger
from prosec.compiler.prosescript import parse as ps
from prosec.compiler.prosescript.builtins import BUILTINS
from prosec.compiler.prosescript.ir import (
    Append,
    Apply,
    Assign,
    Break,
    Constant,
    Continue,
    DiscretionStyle,
    DoCall,
    ExprStmt,
    Filter,
    For,
    If,
    Index,
    Invocation,
    InvocationKind,
    Let,
    Loop,
    Member,
    Number,
    ObjectExpr,
    Ref,
    Repeat,
    StringLit,
)

from .test_parse import PATH, error, fence, parse


def test_function_call_with_positional_and_named_arguments() -> None:
    (let,) = parse('let prior = read_world_model("self", depth: 2)').statements
    assert isinstance(let, Let) and isinstance(let.value, Apply)
    call = let.value
    assert call.function.text == "read_world_model" and call.parenthesized
    first, second = call.args
    assert first.name is None and isinstance(first.value, StringLit)
    assert first.value.value == "self"
    assert second.name is not None and second.name.text == "depth"
    assert isinstance(second.value, Number) and second.value.value == 2
    assert (call.function.span.column, call.span.end_column) == (13, 47)


def test_calls_nest_and_stand_as_statements() -> None:
    let, stmt = parse("let w = max(prior.at, newest_at(fresh))\nnotify(w)").statements
    assert isinstance(let, Let) and isinstance(let.value, Apply)
    inner = let.value.args[1].value
    assert isinstance(inner, Apply) and inner.function.text == "newest_at"
    assert isinstance(stmt, ExprStmt) and isinstance(stmt.value, Apply)
    assert stmt.value.function.text == "notify"


def test_a_paren_apart_from_the_name_is_a_modifier_list() -> None:
    for_stmt, loop = parse(
        """
        for x in items (on-fail: "continue"):
          call a
        loop for each x in items(limit: 3) (max: 5):
          call a
        """
    ).statements
    assert isinstance(for_stmt, For) and isinstance(for_stmt.iterable, Ref)
    assert [m.key.text for m in for_stmt.modifiers if m.key] == ["on-fail"]
    assert isinstance(loop, Loop) and isinstance(loop.iterable, Apply)
    assert isinstance(loop.max, Number) and loop.max.value == 5


def test_keywords_before_a_paren_keep_their_meaning() -> None:
    parallel, loop, branch = parse(
        'parallel("any", count: 1):\n  call a\nloop(max: 2):\n  call a\nif(a is b):\n  call a'
    ).statements
    assert not isinstance(parallel, ExprStmt) and not isinstance(loop, ExprStmt)
    assert isinstance(loop, Loop) and loop.max is not None
    assert isinstance(branch, If) and branch.branches[0].condition is not None
    assert branch.branches[0].condition.text == "(a is b)"
    assert error("return(draft)\n").code == "prosescript_syntax"


def test_every_keyword_is_given_back_by_the_post_lexer() -> None:
    # a word that is not in KEYWORDS would become a call when written right before `(`
    words = {
        t.pattern.value
        for t in ps.parser().terminals
        if t.pattern.type == "str" and t.pattern.value.isidentifier()
    }
    calls = {"input", "max", "write_world_model"}  # builtins, read as calls before `(`
    after_a_value = {"as", "each", "in", "to", "with", "reduce"}  # never where a call starts
    assert words - calls - after_a_value == ps.KEYWORDS
    assert {t.name for t in ps.parser().terminals} >= {w.upper() for w in ps.KEYWORDS}


def test_call_and_session_with_arguments() -> None:
    call, session, inputs = parse(
        """
        const state = call registry(subject, system-name)
        const contracts = session extract(subject)
        let scored = call score-vendor with {
          vendor: vendor,
          prior_entry: prior_entry,
        }
          retry: 2
        """
    ).statements
    assert isinstance(call, Let) and isinstance(call.value, Invocation)
    assert call.value.kind is InvocationKind.CALL and call.value.target is not None
    assert call.value.target.text == "registry"
    assert [a.value.parts for a in call.value.args or () if isinstance(a.value, Ref)] == [
        ("subject",),
        ("system-name",),
    ]
    assert isinstance(session, Let) and isinstance(session.value, Invocation)
    task = session.value
    assert task.kind is InvocationKind.SESSION and task.target is None
    assert task.label is not None and task.label.text == "extract"
    assert task.args is not None and len(task.args) == 1
    assert isinstance(inputs, Let) and isinstance(inputs.value, Invocation)
    assert isinstance(inputs.value.inputs, ObjectExpr)
    assert [e.key.text for e in inputs.value.inputs.entries] == ["vendor", "prior_entry"]
    assert [p.key.text for p in inputs.value.properties] == ["retry"]
    assert inputs.value.args is None


def test_do_takes_named_arguments_and_keeps_its_spaced_form() -> None:
    named, spaced = parse("let r = do polish(draft, tone: 2)\ndo polish (draft)").statements
    assert isinstance(named, Let) and isinstance(named.value, DoCall)
    assert [a.name.text if a.name else None for a in named.value.args or ()] == [None, "tone"]
    assert isinstance(spaced, ExprStmt) and isinstance(spaced.value, DoCall)
    assert spaced.value.args is not None and len(spaced.value.args) == 1


def test_indexing_reads_and_writes() -> None:
    let, assign = parse(
        """
        let entry = prior.vendors[vendor.id].history[0]
        briefs[vendor.vendor_id].draft = draft_brief(vendor)
        """
    ).statements
    assert isinstance(let, Let) and isinstance(let.value, Index)
    outer = let.value
    assert isinstance(outer.key, Number) and outer.key.value == 0
    assert isinstance(outer.target, Member) and outer.target.name.text == "history"
    inner = outer.target.target
    assert isinstance(inner, Index) and isinstance(inner.target, Ref)
    assert inner.target.parts == ("prior", "vendors")
    assert isinstance(inner.key, Ref) and inner.key.parts == ("vendor", "id")
    assert isinstance(assign, Assign) and isinstance(assign.target, Member)
    assert isinstance(assign.target.target, Index)
    assert isinstance(assign.value, Apply)


def test_append_record_and_their_spellings() -> None:
    append_to, record, into, item = parse(
        """
        append proposal to certified_progress
        record { round: round, thesis: thesis } in exchange
        append assessments scored
        append report to by_tier[tier]
        """
    ).statements
    assert isinstance(append_to, Append) and isinstance(append_to.item, Ref)
    assert isinstance(append_to.target, Ref) and append_to.target.head == "certified_progress"
    assert isinstance(record, Append) and isinstance(record.item, ObjectExpr)
    assert isinstance(record.target, Ref) and record.target.head == "exchange"
    assert isinstance(into, Append) and isinstance(into.target, Ref)
    assert (into.target.head, getattr(into.item, "parts", None)) == ("assessments", ("scored",))
    assert isinstance(item, Append) and isinstance(item.target, Index)


def test_break_and_continue() -> None:
    (loop,) = parse(
        """
        for attempt in attempts:
          if attempt failed:
            continue
          break
        """
    ).statements
    assert isinstance(loop, For)
    branch, stop = loop.body
    assert isinstance(stop, Break)
    assert isinstance(branch, If) and isinstance(branch.branches[0].body[0], Continue)
    assert (stop.span.line, stop.span.column, stop.span.end_column) == (5, 3, 8)


def test_filter_where_keeps_the_condition_as_discretion() -> None:
    (let,) = parse("let fresh = filter event.items where item.at > prior.at   # newer\n").statements
    assert isinstance(let, Let) and isinstance(let.value, Filter)
    condition = let.value.condition
    assert condition.text == "item.at > prior.at" and condition.style is DiscretionStyle.BARE
    assert (condition.span.column, condition.span.end_column) == (38, 56)
    assert isinstance(let.value.source, Ref) and let.value.source.parts == ("event", "items")


def test_filter_is_a_name_unless_a_where_clause_follows() -> None:
    _, second = parse("let filter = 1\nlet f = filter\n").statements
    assert isinstance(second, Let) and isinstance(second.value, Ref)
    assert second.value.parts == ("filter",)


def test_write_world_model_with_and_without_parentheses() -> None:
    bare, called = parse(
        "write_world_model { vendors: vendors, watermark: null }\nwrite_world_model(build(x))\n"
    ).statements
    assert isinstance(bare, ExprStmt) and isinstance(bare.value, Apply)
    assert not bare.value.parenthesized and isinstance(bare.value.args[0].value, ObjectExpr)
    assert isinstance(called, ExprStmt) and isinstance(called.value, Apply)
    assert called.value.parenthesized and isinstance(called.value.args[0].value, Apply)


def test_every_statement_form_has_a_builtin_behind_it() -> None:
    grammar = ps.GRAMMAR.read_text(encoding="utf-8")
    statement_forms = {b.name for b in BUILTINS.values() if b.statement}
    assert statement_forms == {"write_world_model"}
    assert 'COMMAND: "write_world_model"' in grammar


def test_new_keywords_stay_names_outside_statement_starts() -> None:
    (call,) = parse(
        """
        call stage
          record: record
          append: continue
          to: break
        """
    ).statements
    assert isinstance(call, ExprStmt) and isinstance(call.value, Invocation)
    values = [p.value for p in call.value.properties]
    assert [v.parts for v in values if isinstance(v, Ref)] == [
        ("record",),
        ("continue",),
        ("break",),
    ]


def test_repeat_and_constant_forms_still_parse_as_before() -> None:
    repeat, let = parse("repeat rounds as r:\n  call a\nlet x = null\n").statements
    assert isinstance(repeat, Repeat) and isinstance(let, Let)
    assert isinstance(let.value, Constant)


def test_the_only_grammar_conflict_is_the_known_one() -> None:
    # `do name (…)`: the `(` opens the block's arguments (shift), never a modifier list
    handler = logging.Handler()
    records: list[str] = []
    handler.emit = lambda record: records.append(record.getMessage())  # type: ignore[method-assign]
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        Lark(
            ps.GRAMMAR.read_text(encoding="utf-8"),
            postlex=ps._Indenter(),
            debug=True,
            **ps._OPTIONS,
        )
    finally:
        logger.setLevel(level)
        logger.removeHandler(handler)
    conflicts = [r for r in records if "conflict" in r.lower()]
    assert conflicts and all("Shift/Reduce conflict for terminal LPAR" in c for c in conflicts)
    rules = [r for r in records if r.strip().startswith("*")]
    assert rules and all("<do_call : DO NAME>" in r for r in rules)


def test_new_forms_parse_the_same_from_the_table_and_a_fresh_build() -> None:
    source = (
        "let a = f(b, c: d[0])\nappend a to e\nrecord a in e\nappend e a\n"
        "let g = filter e where item is new\nwrite_world_model g\nfor x in e:\n  continue\n"
    )
    table = ps.read_table()
    assert table is not None
    assert table.parse(source) == ps.build_parser().parse(source)


def test_spans_of_the_new_forms_are_file_positions() -> None:
    script, _ = ps.parse_script(fence("append x to y\nz[0] = 1\n", content_line=20), PATH)
    assert script is not None
    append, assign = script.statements
    assert (append.span.line, append.span.column, append.span.end_column) == (20, 1, 14)
    assert isinstance(assign, Assign) and isinstance(assign.target, Index)
    assert (assign.target.span.line, assign.target.span.end_column) == (21, 5)
