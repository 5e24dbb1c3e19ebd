"""ProseScript rules: each check fires on the smallest bad script and stays quiet on a good one."""

from __future__ import annotations

import textwrap

import pytest
from prosec.compiler.config import Config
from prosec.compiler.diagnostics import CODES, Diagnostic
from prosec.compiler.lint import lint_texts

FUNCTION = """---
name: {name}
kind: function
---

# Demo

### Parameters

- `topic`: what to work on
- `quality-bar`: acceptance criteria

### Returns

- `report`: the result

### Execution

```prose
{body}
```
"""

HELPER = "---\nname: helper\nkind: function\n---\n\n### Returns\n\n- `x`: a value\n"


def lint(files: dict[str, str]) -> list[Diagnostic]:
    return list(lint_texts(sorted(files.items()), Config()).diagnostics)


def prose_codes(body: str, **extra_files: str) -> list[str]:
    files = {"src/demo.prose.md": FUNCTION.format(name="demo", body=textwrap.dedent(body).strip())}
    files["src/helper.prose.md"] = HELPER
    files.update({f"src/{name}.prose.md": text for name, text in extra_files.items()})
    return [d.code for d in lint(files) if d.code.startswith("prosescript")]


# (script, the codes it must produce) — one row per check, firing
FIRING = [
    ("let a = call helper\n  x: topicc", ["prosescript_undefined_name"]),
    ('session "about {nothing}"', ["prosescript_undefined_name"]),
    ("let a = session: nobody", ["prosescript_undefined_name"]),
    ("let r = do missing-block(1)", ["prosescript_undefined_name"]),
    (
        "parallel:\n  let a = call helper\n  let b = call helper\n    x: a",
        ["prosescript_undefined_name"],
    ),
    ("if topic is long:\n  let inner = 1\nreturn inner", ["prosescript_undefined_name"]),
    ("let a = call nowhere", ["prosescript_unknown_call"]),
    ("agent writer:\n  model: sonnet\nlet a = call writer", ["prosescript_unknown_call"]),
    ("loop until done:\n  call helper", ["prosescript_unbounded_loop"]),
    ("loop:\n  call helper", ["prosescript_unbounded_loop"]),
    ("loop for each x in topic:\n  call helper", ["prosescript_unbounded_for_each"]),
    ('input extra: "x"', ["prosescript_legacy_io"]),
    ("output report = topic", ["prosescript_legacy_io"]),
    ("try:\n  call helper", ["prosescript_try_without_handler"]),
    ("throw", ["prosescript_throw_outside_catch"]),
    ("repeat 0:\n  call helper", ["prosescript_count_invalid"]),
    ("loop (max: 2.5):\n  call helper", ["prosescript_count_invalid"]),
    ('repeat "three":\n  call helper', ["prosescript_count_invalid"]),
    ("call helper\n  retry: -1", ["prosescript_count_invalid"]),
    ('parallel ("any", count: 3):\n  call helper\n  call helper', ["prosescript_count_invalid"]),
    ('parallel ("all", count: 1):\n  call helper', ["prosescript_count_without_any"]),
    ('parallel ("most"):\n  call helper', ["prosescript_parallel_modifier_invalid"]),
    ('parallel (on-fail: "explode"):\n  call helper', ["prosescript_parallel_modifier_invalid"]),
    ("parallel (speed: 2):\n  call helper", ["prosescript_parallel_modifier_invalid"]),
    ('parallel ("all", "first"):\n  call helper', ["prosescript_parallel_modifier_invalid"]),
    ("let a = 1\nlet a = 2", ["prosescript_duplicate_binding"]),
    ("parallel:\n  let a = call helper\n  let a = call helper", ["prosescript_duplicate_binding"]),
    ("block b(x, x):\n  return x", ["prosescript_duplicate_binding"]),
    ("let a = 1\nrepeat 2:\n  let a = 2", ["prosescript_shadowed_binding"]),
    ("const a = 1\na = 2", ["prosescript_immutable_reassigned"]),
    ("for x in topic:\n  x = 1", ["prosescript_immutable_reassigned"]),
    ("try:\n  call helper\ncatch as e:\n  e = 1", ["prosescript_immutable_reassigned"]),
    ("b = 2", ["prosescript_assign_undeclared"]),
    ("agent a:\n  model: x\nagent a:\n  model: y", ["prosescript_duplicate_definition"]),
    ("agent a:\n  model: x\nblock a():\n  return 1", ["prosescript_duplicate_definition"]),
    ('use "std/x" as a\nblock a():\n  return 1', ["prosescript_use_alias_collision"]),
    ('use "std/x" as a\nuse "std/y" as a', ["prosescript_use_alias_duplicate"]),
    ('use "std/x" as a.b', ["prosescript_use_alias_invalid"]),
    ('use ""', ["prosescript_use_empty"]),
    ('use "  " as a', ["prosescript_use_empty"]),
    ("call helper\n  x: 1\n  x: 2", ["prosescript_duplicate_property"]),
    (
        'choice best:\n  option "a":\n    call helper\n  option "a":\n    call helper',
        ["prosescript_duplicate_option"],
    ),
    ("block b(x):\n  return x\nlet r = do b(1, 2)", ["prosescript_block_arity"]),
    ("block b(x):\n  return x\ndo b", ["prosescript_block_arity"]),
    ("call helper\n  retry: 2\n  backoff: sometimes", ["prosescript_backoff_invalid"]),
    ("call helper\n  backoff: linear", ["prosescript_backoff_without_retry"]),
    ("agent a:\n  model: x\nlet r = resume: a", ["prosescript_resume_not_persistent"]),
    ("agent a:\n  persist: false\nlet r = resume: a", ["prosescript_resume_not_persistent"]),
    ('let a = 1\nuse "std/x" as x', ["prosescript_use_after_statement"]),
    ('let a = "bad \\q"', ["prosescript_bad_escape"]),
    ("let a = session extract (topic)", ["prosescript_syntax"]),  # `(` apart from the name
    ("continue", ["prosescript_loop_control_misplaced"]),
    ("if topic is long:\n  break", ["prosescript_loop_control_misplaced"]),
    ("parallel for x in topic:\n  break", ["prosescript_loop_control_misplaced"]),
    ("for x in topic:\n  parallel:\n    continue", ["prosescript_loop_control_misplaced"]),
    (
        "for x in topic:\n  let y = x\n    | map:\n        continue",
        ["prosescript_loop_control_misplaced"],
    ),
    ("block b():\n  break\nrepeat 2:\n  do b()", ["prosescript_loop_control_misplaced"]),
    ('let a = read_world_model("self", "x")', ["prosescript_builtin_arity"]),
    ("let a = max()", ["prosescript_builtin_arity"]),
    ("let a = read_world_model(node: topic)", ["prosescript_builtin_arity"]),
    ("let a = summarize(topic)", ["prosescript_render_operation"]),
    ('let a = input("topik")', ["prosescript_undefined_name"]),
    ("let a = helper(nowhere)", ["prosescript_undefined_name"]),
    ("let a = call helper(topic) with { x: nowhere }", ["prosescript_undefined_name"]),
    ("let a = topic[index]", ["prosescript_undefined_name"]),
    ("append topic to nowhere", ["prosescript_assign_undeclared"]),
    ("record topic in nowhere", ["prosescript_assign_undeclared"]),
    ("nowhere[0] = topic", ["prosescript_assign_undeclared"]),
    ("let xs = []\nappend xs nowhere", ["prosescript_undefined_name"]),
    ("let a = filter nowhere where item is long", ["prosescript_undefined_name"]),
    ("let a = call read_world_model", ["prosescript_unknown_call"]),
    ("agent w:\n  model: x\nlet a = w(topic)", ["prosescript_unknown_call"]),
    ("block b(x):\n  return x\nlet a = b(topic)", ["prosescript_unknown_call"]),
    ("block b(x):\n  return x\nlet r = do b(y: 1)", ["prosescript_block_arity"]),
    ("block b(x):\n  return x\nlet r = do b(1, x: 1)", ["prosescript_block_arity"]),
    ("block b(x, y):\n  return x\nlet r = do b(x: 1, 2)", ["prosescript_block_arity"]),
    ("let a = helper(x: 1, x: 2)", ["prosescript_duplicate_property"]),
    ("for x in topic:\n  x[0] = 1\n  x = 2", ["prosescript_immutable_reassigned"]),
]

# scripts that must lint clean: each sits next to a check and shows what it allows
QUIET = [
    "let a = call helper\n  x: topic\n  bar: quality_bar\nreturn a",  # `-`/`_` spell one name
    'session "about {topic} and \\{literal}"',
    "agent writer:\n  model: sonnet\n  persist: project\nlet a = session: writer\nlet b = resume: writer",
    "block b(x):\n  return x\nlet r = do b(topic)",
    "parallel:\n  let a = call helper\n  let b = call helper\nreturn { a, b }",
    "let inner = null\nif topic is long:\n  inner = 1\nreturn inner",
    'use "std/evals/inspector" as inspector\nlet a = call inspector',
    'let a = call "std/evals/inspector"\nlet b = call std/evals/inspector',
    "for delegate in topic:\n  call delegate",  # a call target held in a variable
    "loop until done (max: 3) as round:\n  call helper\n    r: round",
    "loop for each x in topic (max: 3):\n  call helper",
    "try:\n  call helper\nfinally:\n  call helper",
    "try:\n  call helper\ncatch:\n  throw",
    "try:\n  call helper\ncatch as e:\n  if e is fatal:\n    throw e",
    "repeat 2 as attempt:\n  call helper\nloop (max: topic.rounds):\n  call helper",
    'parallel ("any", count: 1, on-fail: "ignore"):\n  call helper\n  call helper',
    "let a = 1\nrepeat 2:\n  a = a",
    "let xs = topic\n  | map:\n      return item\n  | reduce(acc, x):\n      return acc",
    "call helper\n  retry: 3\n  backoff: exponential",
    'choice best:\n  option "a":\n    call helper\n  option "b":\n    call helper',
    "let { a, b } = call helper\nreturn { a, b, c: a.d }",
    # the forms beyond the reference grammar
    'let prior = read_world_model("self")\nlet t = read_subscription("feed", "risk")',
    'let t = input("topic")\nlet q = input("quality-bar")\nlet m = max(1, min([2, 3]))',
    "let a = helper(topic, depth: 2)\nlet b = call helper(topic) with { x: a }",
    "let s = session extract(topic)\nlet xs = []\nappend s to xs\nrecord s in xs\nappend xs s",
    "const xs = []\nappend topic to xs\nxs[0] = topic",  # writes into a const's value
    "for x in topic:\n  if x is done:\n    continue\n  if x is last:\n    break",
    "parallel for x in topic:\n  try:\n    continue\n  finally:\n    call helper",
    "let a = filter topic where item.at > 3\nwrite_world_model { a: a[0].b }",
    "write_world_model(topic)",
    "for delegate in topic:\n  let r = delegate(topic)",  # a function held in a variable
    "block b(x, y):\n  return x\nlet r = do b(1, y: 2)\nlet s = do b(y: 2, x: 1)",
]


@pytest.mark.parametrize(("body", "expected"), FIRING)
def test_check_fires(body: str, expected: list[str]) -> None:
    assert prose_codes(body) == expected


@pytest.mark.parametrize("body", QUIET)
def test_check_stays_quiet(body: str) -> None:
    assert prose_codes(body) == []


def test_every_prosescript_code_has_a_firing_example() -> None:
    owned = {code for code in CODES if code.startswith("prosescript_")}
    assert owned == {code for _, codes in FIRING for code in codes}


def test_severities_follow_the_language_reference() -> None:
    warnings = {
        c
        for c, info in CODES.items()
        if c.startswith("prosescript_") and info.severity.value == "warning"
    }
    assert warnings == {
        "prosescript_unbounded_loop",
        "prosescript_shadowed_binding",
        "prosescript_duplicate_option",
        "prosescript_backoff_without_retry",
    }


# -- the contract scope -----------------------------------------------------------------------


RESPONSIBILITY = """---
name: watcher
kind: responsibility
id: 067NC4KG0NSK9D9P6WW3JEHV7G
---

### Requires

- `incident-events`: what happened

#### deploys

Deploy notes from the release train.

### Maintains

- `briefing`: the current briefing

#### timeline

The incident timeline.

### Execution

```prose
let signals = call helper
  events: incident-events
  deploys: deploys
  prior: briefing
  prior-timeline: timeline
  missing: nowhere
return signals
```
"""


def test_responsibility_scope_is_requires_and_maintains() -> None:
    found = lint({"src/watcher.prose.md": RESPONSIBILITY, "src/helper.prose.md": HELPER})
    undefined = [d for d in found if d.code == "prosescript_undefined_name"]
    assert [d.message.split("`")[1] for d in undefined] == ["nowhere"]
    lines = RESPONSIBILITY.split("\n")
    assert lines[undefined[0].span.line - 1].strip() == "missing: nowhere"
    assert lines[undefined[0].span.line - 1][undefined[0].span.column - 1 :] == "nowhere"


PATTERN = """---
name: review-loop
kind: pattern
---

### Slots

- `worker`: does the work
  - requires: `task`, optional `feedback`
- `critic`
  - requires: output, quality_bar
  - ensures: verdict

### Config

- `max_rounds` (integer, default: 3): the budget

### Requires

- Pattern instance receives:
    task_brief: string    -- the task

### Delegation

```prose
repeat max_rounds:
  let output = call worker
    task: task
    brief: task_brief
  let verdict = call critic
    output: output
    bar: quality_bar
    rounds: config.max_rounds
  if verdict accepts:
    return output
return null
```
"""


def test_pattern_scope_is_slots_config_and_declared_inputs() -> None:
    assert [d.code for d in lint({"patterns/review-loop.prose.md": PATTERN})] == []


def test_pattern_delegation_calls_resolve_only_to_slots() -> None:
    broken = PATTERN.replace("call critic", "call judge")
    found = lint({"patterns/review-loop.prose.md": broken, "patterns/other.prose.md": HELPER})
    assert [d.code for d in found] == ["prosescript_unknown_call"]


def test_call_targets_inline_functions_shape_delegates_and_pattern_instances() -> None:
    body = """
    let a = call local-helper
    let b = call reviewer
    let c = call reviewed-result
    let d = call sibling
    let e = call helper
    """
    extra = (
        "\n### Shape\n\n- `delegates`:\n  - `reviewer`: reviews drafts\n\n"
        "### Patterns\n\n```yaml\n- name: reviewed-result\n  pattern: worker-critic\n```\n\n"
        "## local-helper\n\n### Returns\n\n- `x`: y\n"
    )
    text = FUNCTION.format(name="demo", body=textwrap.dedent(body).strip()) + extra
    sibling = "---\nname: not-the-stem\nkind: function\n---\n\n### Returns\n\n- `x`: y\n"
    files = {
        "src/demo.prose.md": text,
        "src/sibling.prose.md": sibling,
        "src/helper.prose.md": HELPER,
    }
    assert [d.code for d in lint(files) if d.code.startswith("prosescript")] == []


def test_call_targets_by_directory_and_project() -> None:
    """Call targets are indexed once per project and directory: a sibling's inline
    function is callable only beside it, a non-inline one from anywhere, and the next
    project linted gets its own index."""
    caller = FUNCTION.format(name="demo", body="let a = call far-away\nlet b = call inline-one")
    inline = "\n## inline-one\n\n### Returns\n\n- `x`: y\n"
    far = HELPER.replace("helper", "far-away") + inline
    beside = {"src/demo.prose.md": caller, "src/far.prose.md": far}
    apart = {"src/demo.prose.md": caller, "src/other.prose.md": HELPER, "lib/far.prose.md": far}
    unknown = [d.message for d in lint(apart) if d.code == "prosescript_unknown_call"]
    assert [d.code for d in lint(beside) if d.code.startswith("prosescript")] == []
    assert len(unknown) == 1 and "`call inline-one`" in unknown[0]
    # the same file linted again in the first project: its index is not the second's
    assert [d.code for d in lint(beside) if d.code.startswith("prosescript")] == []
    unknown_again = [d.message for d in lint(apart) if d.code == "prosescript_unknown_call"]
    assert unknown_again == unknown


def test_unknown_calls_are_not_reported_when_the_neighbours_were_not_loaded() -> None:
    text = FUNCTION.format(name="demo", body="let a = call sibling-we-did-not-read")
    assert [d.code for d in lint({"src/demo.prose.md": text})] == []


def test_every_prose_fence_of_a_contract_is_checked() -> None:
    text = FUNCTION.format(name="demo", body="call helper") + (
        "\n### Strategies\n\n- when stuck:\n\n  ```prosescript\n  loop:\n    call helper\n  ```\n"
    )
    found = lint({"src/demo.prose.md": text, "src/helper.prose.md": HELPER})
    (loop,) = [d for d in found if d.code.startswith("prosescript")]
    assert loop.code == "prosescript_unbounded_loop"
    assert text.split("\n")[loop.span.line - 1].strip() == "loop:"


def test_unclosed_fence_is_left_to_fence_unterminated() -> None:
    text = FUNCTION.format(name="demo", body="loop:\n  call helper").rsplit("```", 1)[0]
    found = lint({"src/demo.prose.md": text})
    assert [d.code for d in found] == ["fence_unterminated"]


# modules that only a file with a ```prose fence may load
_SCRIPT_MODULES = ("lark", "prosec.compiler.prosescript.parse", "prosec.compiler.prosescript.ir")


def _loaded_after_lint(text: str) -> list[str]:
    import json
    import subprocess
    import sys

    program = (
        "import json, sys\n"
        "from prosec.compiler.lint import lint_texts\n"
        "from prosec.compiler.config import Config\n"
        f"lint_texts([('a.prose.md', {text!r})], Config())\n"
        f"print(json.dumps([m for m in {_SCRIPT_MODULES!r} if m in sys.modules]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    loaded: list[str] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


def test_a_file_without_prose_fences_never_loads_lark_or_the_script_ir() -> None:
    plain = "---\nname: a\nkind: function\n---\n### Returns\n- `x`: y\n"
    assert _loaded_after_lint(plain) == []
    fenced = plain + "\n### Execution\n\n```prose\nreturn x\n```\n"
    assert _loaded_after_lint(fenced) == list(_SCRIPT_MODULES)


def test_a_sentence_need_declares_its_backticked_names() -> None:
    text = RESPONSIBILITY.replace(
        "- `incident-events`: what happened\n",
        "The latest `incident-events` as the pager reports them.\n",
    ).replace("  missing: nowhere\n", "")
    # lint also wires the project now: the need has no producer here (wiring_unsatisfied),
    # which is not a ProseScript finding
    assert [
        d.code
        for d in lint({"src/watcher.prose.md": text, "src/helper.prose.md": HELPER})
        if d.code.startswith("prosescript")
    ] == []


def test_maintains_clause_lines_declare_nothing() -> None:
    body = "let a = call helper\n  x: Material"
    text = FUNCTION.format(name="demo", body=body).replace(
        "### Returns", "### Maintains\n\nMaterial: the report text.\n\n### Returns"
    )
    found = lint({"src/demo.prose.md": text, "src/helper.prose.md": HELPER})
    assert "prosescript_undefined_name" in [d.code for d in found]
