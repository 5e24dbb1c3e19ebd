"""`prosec validate FILE`: check any compiled intent (schema and semantic rules)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from prosec.runtime.intent_check import iter_problems
from prosec.runtime.problems import Problem
from prosec.runtime.userjson import JSONInputError, loads

from .. import report
from .errors import ExitCode
from .inputs import MANIFEST_LIMIT, read_input


def load_intent(path: Path) -> tuple[Any, list[Problem]]:
    """The parsed document, or the problem that it is not (strict) JSON; exit 2 when the
    file cannot be read (missing, not a regular file, too large)."""
    data = read_input(path, MANIFEST_LIMIT)
    try:
        return loads(data, source=""), []
    except JSONInputError as exc:
        return None, [Problem("$", str(exc))]


@click.command(name="validate")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("text", "json")),
    default="text",
    show_default=True,
    help="text: `FILE: $.json.path: message` per problem; json: a list of records.",
)
@click.option("-q", "--quiet", is_flag=True, help="Do not print the summary line on stderr.")
def validate_command(file: Path, fmt: str, quiet: bool) -> None:
    """Check a compiled intent (dist/manifest.*.json, a run's compiled-intent.json, or a
    manifest written by the upstream toolchain) against the schema and the semantic
    rules: edges reference nodes, entry points are external nodes, `acyclic` is honest,
    one canonicalizer and one postcondition per node, producer facets cover edge facets,
    fingerprints match, nothing retired. Every problem is listed with its JSON path.

    Exit status: 0 valid, 1 problems, 2 unreadable file.
    """
    document, problems = load_intent(file)
    if not problems:
        problems = list(iter_problems(document))
    if fmt == "json":
        records = [{"path": p.path, "message": p.message} for p in problems]
        sys.stdout.write(json.dumps(records, indent=2, ensure_ascii=False) + "\n")
    else:
        for problem in problems:
            click.echo(f"{file}: {problem}")
    if not quiet:
        verdict = "valid" if not problems else report.plural(len(problems), "problem")
        click.echo(f"prosec: {file}: {verdict}", err=True)
    sys.exit(ExitCode.FINDINGS if problems else ExitCode.OK)
