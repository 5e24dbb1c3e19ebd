"""`### Runtime` lowering: persist scopes, a path, the model, and what is refused."""

from __future__ import annotations

import json

import pytest
from prosec.compiler.lint import parse_texts
from prosec.compiler.passes.fingerprint import fingerprint
from prosec.compiler.runtime_hints import RuntimeHints, check, lower

from ..conftest import CORPUS, Runner

HEAD = "---\nname: keeper\nkind: responsibility\nid: 0KEEPERHARB0VR000000000000\n---\n\n"
MAINTAINS = "### Maintains\n\n- `log`: the log\n"


def contract(runtime: str | None):
    text = HEAD + MAINTAINS + (f"\n### Runtime\n\n{runtime}" if runtime is not None else "")
    project, _ = parse_texts([("src/keeper.prose.md", text)])
    return project.contracts[0]


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("- `persist`: true\n", RuntimeHints(persist="true")),
        ("- `persist`: project\n", RuntimeHints(persist="project")),
        ("- persist: `user` — across projects\n", RuntimeHints(persist="user")),
        ('- `persist`: "memory/keeper/"\n', RuntimeHints(persist="path", path="memory/keeper")),
        ("- `persist`: false\n", None),
        ("- `model`: opus\n", RuntimeHints(model="opus")),
        (
            "- model: `anthropic/claude-haiku-4-5` — the cheap one\n- `persist`: project\n",
            RuntimeHints(persist="project", model="anthropic/claude-haiku-4-5"),
        ),
        ("- `temperature`: 0.2\n", None),
    ],
)
def test_runtime_section_lowers_to_hints(written: str, expected: RuntimeHints | None) -> None:
    node = contract(written)
    assert lower(node) == expected
    assert check(node) == []


@pytest.mark.parametrize(
    ("written", "words"),
    [
        ("- `persist`: forever\n", "is not `true`, `project`, `user`, `false`"),
        ('- `persist`: "/var/memory"\n', "inside the project"),
        ('- `persist`: "~/memory"\n', "inside the project"),
        ('- `persist`: "../elsewhere"\n', "must not leave the project"),
        ("- `model`: `not a model`\n", "is not a model name"),
    ],
)
def test_a_bad_setting_is_a_warning_on_its_line_and_not_compiled(written: str, words: str) -> None:
    node = contract(written)
    (found,) = check(node)
    assert found.code == "runtime_setting_invalid"
    assert found.severity.value == "warning"
    assert words in found.message
    assert found.span.line == HEAD.count("\n") + MAINTAINS.count("\n") + 4
    assert lower(node) is None


def test_hints_enter_the_fingerprint_only_when_stated() -> None:
    bare = fingerprint(contract(None))
    assert fingerprint(contract("- `temperature`: 0.2\n")) == bare
    assert fingerprint(contract("- `persist`: project\n")) != bare
    assert fingerprint(contract("- `persist`: project\n")) != fingerprint(
        contract("- `persist`: user\n")
    )
    assert fingerprint(contract("- `model`: a\n")) != fingerprint(contract("- `model`: b\n"))


def shaped(shape: str):
    text = HEAD + MAINTAINS + f"\n### Shape\n\n{shape}"
    project, _ = parse_texts([("src/keeper.prose.md", text)])
    return project.contracts[0]


def test_shape_delegates_are_lowered_in_order_without_duplicates() -> None:
    node = shaped(
        "- `self`: keep the log\n- `delegates`:\n  - `tide-almanac`: tides\n"
        "  - `sync_analyst`: drift\n  - `tide-almanac`: again\n- `prohibited`: none\n"
    )
    assert lower(node) == RuntimeHints(delegates=("tide-almanac", "sync_analyst"))
    assert check(node) == []
    inline = shaped("- `delegates`: `a`, `b`\n")
    assert lower(inline) == RuntimeHints(delegates=("a", "b"))
    assert lower(shaped("- `delegates`: every phase of the compiler\n")) is None


def test_a_delegate_that_cannot_be_bound_is_a_warning() -> None:
    node = shaped("- `delegates`:\n  - `a/b`: no\n")
    (found,) = check(node)
    assert found.code == "runtime_setting_invalid" and "delegate `a/b`" in found.message
    assert lower(node) is None


def test_explain_shows_the_runtime_hints(run_prosec: Runner) -> None:
    lighthouse = CORPUS / "lighthouse-watch"
    text = run_prosec("explain", "lighthouse-keeper", cwd=lighthouse)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[1] == (
        "runtime: memory state/agents/lighthouse-keeper/ (persist: project), "
        "model harbour-small, delegates tide-almanac"
    )
    data = json.loads(
        run_prosec("explain", "lighthouse-keeper", "--format", "json", cwd=lighthouse).stdout
    )
    assert data["runtime"] == {
        "persist": "project",
        "model": "harbour-small",
        "delegates": ["tide-almanac"],
    }
    plain = json.loads(
        run_prosec("explain", "lamp-reports", "--format", "json", cwd=lighthouse).stdout
    )
    assert "runtime" not in plain
