"""`prosec lsp` on the command line: help, registration and option checks."""

from __future__ import annotations

from ...conftest import Runner


def test_the_command_line(run_prosec: Runner) -> None:
    result = run_prosec("lsp", "--help")
    assert result.returncode == 0 and "--debounce-ms" in result.stdout
    assert "lsp" in run_prosec("--help").stdout
    assert run_prosec("lsp", "--debounce-ms", "-1").returncode == 2
