"""Compile a project in memory for the inspection commands (`explain`, `graph`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..pipeline import CompileResult, compile_project
from .common import project_config
from .errors import ExitCode, user_errors


def compile_for_inspection(root: Path, strict: bool | None) -> CompileResult:
    """Sources as `prosec build` sees them; no host lookups, nothing written."""
    config = project_config(root, strict=strict, offline_tools=True)
    with user_errors():
        result = compile_project(root, config)
    if result.unit.topology is None:
        click.echo(
            "prosec: the project could not be wired; run `prosec build` for details", err=True
        )
        sys.exit(ExitCode.FINDINGS)
    return result
