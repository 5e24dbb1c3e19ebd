"""`### Runtime` lowering: persist scopes, a path, the model, and what is refused."""

from __future__ import annotations

import pytest
from prosec.compiler.lint import parse_texts
from prosec.compiler.passes.fingerprint import fingerprint
from prosec.compiler.runtime_hints import RuntimeHints, check, lower

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
