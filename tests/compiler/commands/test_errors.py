"""One ExitCode and one error printer: `fail` prints `prosec: error: …` and exits 2,
`user_errors` maps every user-error exception to it, and no command exits with a bare
integer or prints its own error line."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from prosec.compiler.commands.errors import ExitCode, fail, user_error_types, user_errors
from prosec.compiler.discover import DiscoveryError
from prosec.runtime.backends import BackendError
from prosec.runtime.fsio import PathEscapeError
from prosec.runtime.intent_check import IntentError
from prosec.runtime.project_toml import ConfigError, ConfigProblem
from prosec.runtime.receipts import Finding, LedgerError
from prosec.runtime.renders import BindingError
from prosec.runtime.session import SessionError
from prosec.runtime.userjson import JSONInputError
from prosec.runtime.vm.driver import VmError
from prosec.runtime.vm.journal import JournalError

from ...conftest import REPO


def test_exit_codes_are_the_documented_ones() -> None:
    assert {code.name: int(code) for code in ExitCode} == {
        "OK": 0,
        "FINDINGS": 1,
        "USAGE": 2,
        "INTERNAL": 3,
        "INTERRUPTED": 130,
    }


def test_fail_prints_one_error_line_and_exits_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        fail("prose.toml:3: run.jobs: 'two' is not of type 'integer'")
    assert exit_info.value.code == ExitCode.USAGE == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "prosec: error: prose.toml:3: run.jobs: 'two' is not of type 'integer'\n"


USER_ERRORS = [
    SessionError("no dist/manifest.active.json"),
    IntentError("$.topology: not acyclic"),
    ConfigError(
        Path("prose.toml"), [ConfigProblem(key="run.jobs", message="not an integer", line=2)]
    ),
    BackendError("the PostgreSQL backend needs the 'postgres' extra"),
    BindingError("node 'a': no render bound"),
    PathEscapeError("world/../x escapes the root"),
    LedgerError([Finding(file="a/receipts.jsonl", position="3", node="a", message="bad prev")]),
    DiscoveryError("missing.prose.md: no such file or directory"),
    JSONInputError("--data: the number 1e400 is out of range (it overflows a double)"),
    FileNotFoundError("runs/20240101-000000-aaaaaa: no such run"),
    PermissionError("state/: permission denied"),
    VmError("run 20240101-000000-aaaaaa: its compiled intent has no `vm` section"),
    JournalError("runs/x/vm/journal.jsonl:3: the chain is broken (prev does not match)"),
]


@pytest.mark.parametrize("error", USER_ERRORS, ids=lambda e: type(e).__name__)
def test_each_user_error_is_printed_and_exits_usage(
    error: Exception, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info, user_errors():
        raise error
    assert exit_info.value.code == ExitCode.USAGE
    assert capsys.readouterr().err == f"prosec: error: {error}\n"


def test_the_mapping_lists_exactly_these_types() -> None:
    assert set(user_error_types()) == {type(error) for error in USER_ERRORS}


@pytest.mark.parametrize("error", [KeyError("bug"), ValueError("bug"), OSError("disk")])
def test_anything_else_propagates_as_a_bug(error: Exception) -> None:
    with pytest.raises(type(error)) as raised, user_errors():
        raise error
    assert raised.value is error


def _exit_calls(path: Path) -> list[tuple[int, ast.expr | None]]:
    """(line, first argument) of every sys.exit / ctx.exit / SystemExit / exit call,
    except in an `if __name__ == "__main__":` block: a program ending itself (the python
    render worker), not library code turning an error into an exit code."""
    calls = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    programs = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
    ]
    for node in ast.walk(tree):
        if any(node in ast.walk(program) for program in programs):
            continue
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in ("exit", "SystemExit", "_exit"):
            calls.append((node.lineno, node.args[0] if node.args else None))
    return calls


def test_no_command_exits_with_a_bare_integer() -> None:
    bare = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted((REPO / "compiler").rglob("*.py"))
        for line, argument in _exit_calls(path)
        if argument is None or isinstance(argument, ast.Constant)
    ]
    assert bare == []


def test_the_runtime_never_exits() -> None:
    """A library raises; only the CLI layer turns errors into exit codes."""
    calls = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted((REPO / "runtime").rglob("*.py"))
        for line, _ in _exit_calls(path)
    ]
    assert calls == []


def test_only_the_printer_spells_the_error_prefix() -> None:
    spelled = sorted(
        str(path.relative_to(REPO))
        for package in ("compiler", "runtime")
        for path in (REPO / package).rglob("*.py")
        if "prosec: error" in path.read_text(encoding="utf-8")
    )
    assert spelled == ["compiler/commands/errors.py"]


def test_ctrl_c_exits_130_not_clicks_aborted(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import prosec.compiler.commands.lint as lint_module
    from prosec.compiler.cli import main

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(lint_module, "lint_refs", interrupted)
    (tmp_path / "a.prose.md").write_text("---\nname: a\nkind: function\n---\n# A\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["lint", str(tmp_path)])
    assert exit_info.value.code == 130
    assert capsys.readouterr().err == "prosec: interrupted\n"
