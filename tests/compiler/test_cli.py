"""The `prosec` entry point: version, help, and usage errors as whole processes."""

from __future__ import annotations

from prosec.compiler import __version__

from ..conftest import Runner


def test_version(run_prosec: Runner) -> None:
    result = run_prosec("--version")
    assert result.returncode == 0
    assert __version__ in result.stdout


def test_help_lists_lint(run_prosec: Runner) -> None:
    result = run_prosec("--help")
    assert result.returncode == 0
    assert "lint" in result.stdout


def test_unknown_command_is_usage_error(run_prosec: Runner) -> None:
    result = run_prosec("no-such-command")
    assert result.returncode == 2


def test_missing_path_is_usage_error(run_prosec: Runner, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = run_prosec("lint", tmp_path / "missing")
    assert result.returncode == 2
    assert "no such file" in result.stderr
