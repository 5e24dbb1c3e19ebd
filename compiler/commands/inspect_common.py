"""Compile a project in memory for the inspection commands (`explain`, `graph`)."""

from __future__ import annotations

from pathlib import Path

import click

from ..discover import DiscoveryError
from ..pipeline import CompileResult, compile_project
from .common import exit_usage, project_config


def compile_for_inspection(root: Path, strict: bool | None) -> CompileResult:
    """Sources as `prosec build` sees them; no host lookups, nothing written."""
    config = project_config(root, strict=strict, offline_tools=True)
    try:
        result = compile_project(root, config)
    except DiscoveryError as exc:
        exit_usage(str(exc))
    if result.unit.topology is None:
        click.echo(
            "prosec: the project could not be wired; run `prosec build` for details", err=True
        )
        raise SystemExit(1)
    return result
