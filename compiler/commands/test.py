"""`prosec test [PATH…]`: run `kind: test` contracts and report them (text, json, junit).

Exit codes: 0 every test passed, 1 a test failed or could not run, 2 usage or an error
before anything ran (a fixture that misses a required input, an unknown fixture, a
project that does not compile, a bad flag), 3 internal error.
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
from pathlib import Path

import click
from prosec.runtime.fsio import atomic_write_text
from prosec.runtime.testing import JudgeError, TestResult

from .. import report
from ..diagnostics import Severity
from ..report import plural
from ..test_suite import find_tests, plan_suite, run_suite
from .errors import ExitCode, fail, user_errors
from .inputs import finite_seconds
from .test_formats import junit_xml, require_junit, summary_text

__all__ = ["test_command"]

FORMATS = ("text", "json", "junit")


@click.command("test")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--recursive", "-r", is_flag=True, help="Search directories below PATH too.")
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    help="Keep each test's root (its runs, report.md) in DIR/<test> (default: a new "
    "temporary folder, named at the end).",
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the report to FILE.",
)
@click.option(
    "--judge-replay",
    is_flag=True,
    help="Take the judge's verdicts from the last run recorded in --out (judgements.json) "
    "instead of calling the judge.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1, max=64),
    default=1,
    show_default=True,
    help="Tests run in parallel.",
)
@click.option("--timeout", type=float, callback=finite_seconds, help="Seconds per render.")
def test_command(
    paths: tuple[Path, ...],
    recursive: bool,
    out: Path | None,
    fmt: str,
    output: Path | None,
    judge_replay: bool,
    jobs: int,
    timeout: float | None,
) -> None:
    """Run test contracts: bind `### Fixtures`, run the subject, check `### Expects`.

    PATHS are test files or directories (default: the current directory); a directory's
    `*.prose.md` files with `kind: test` are run (`--recursive`: every one below it).
    Each test runs in a root of its own (DIR/<test>/, never the project's state/): the
    producers the subject requires publish their fixtures, the subject renders as
    prose.toml binds it, and each assertion is checked against what it published, by a
    deterministic check where its text allows, else by the judge of `[test.judge]`.
    Every test runs; report.md and test-result.json land in each test's run folder.

    Exit status: 0 all passed, 1 a test failed or errored, 2 usage or an error before
    running (a fixture misses a required input), 3 internal error.
    """
    if judge_replay and out is None:
        raise click.UsageError(
            "--judge-replay reads the verdicts recorded in --out DIR: give --out"
        )
    if fmt == "junit":
        require_junit()  # before anything runs: say what to install
    if output is not None:
        _writable(output)
    if out is not None and out.exists() and not out.is_dir():
        fail(f"--out {out}: not a directory")
    with user_errors():
        files = find_tests(list(paths) or [Path(".")], recursive=recursive)
    if not files:
        where = ", ".join(str(p) for p in paths) or "."
        fail(f"no `kind: test` contracts in {where}{'' if recursive else ' (try --recursive)'}")
    with user_errors():
        suite = plan_suite(files)
    if suite.has_errors:
        sys.stderr.write(report.render_text(suite.diagnostics))
        errors = sum(d.severity is Severity.ERROR for d in suite.diagnostics)
        fail(f"{plural(errors, 'error')} before any test ran: nothing was run")
    if suite.diagnostics:
        sys.stderr.write(report.render_text(suite.diagnostics))
    folder = out if out is not None else Path(tempfile.mkdtemp(prefix="prosec-test-"))
    lock = threading.Lock()
    # as upstream, each result as it completes, on a terminal (a log gets the summary)
    interactive = fmt == "text" and output is None and sys.stderr.isatty()

    def progress(result: TestResult) -> None:
        if interactive:
            with lock:
                word = {"pass": "PASS", "fail": "FAIL"}.get(result.status, "ERROR")
                click.echo(f"{result.name}: {word}", err=True)

    try:
        results = run_suite(
            suite, folder, jobs=jobs, timeout=timeout, judge_replay=judge_replay, on_result=progress
        )
    except JudgeError as exc:
        fail(str(exc))
    if fmt == "json":
        text = (
            json.dumps(
                {"results": [r.to_json() for r in results], "out": str(folder.resolve())},
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    elif fmt == "junit":
        text = junit_xml(results)
    else:
        text = summary_text(results)
    if output is not None:
        try:
            atomic_write_text(output, text)
        except OSError as exc:
            fail(f"-o {output}: cannot write the report: {exc.strerror or exc}")
        click.echo(f"prosec: wrote the {fmt} report to {output}", err=True)
    else:
        click.echo(text, nl=False)
    click.echo(f"prosec: each test's runs and report.md are under {folder.resolve()}", err=True)
    failed = any(r.status != "pass" for r in results)
    sys.exit(ExitCode.FINDINGS if failed else ExitCode.OK)


def _writable(output: Path) -> None:
    """`-o FILE` is a regular file or nothing yet, in a directory that exists (a FIFO
    would block the report, a directory would lose it)."""
    if (output.exists() or output.is_symlink()) and not output.is_file():
        fail(f"-o {output}: not a regular file")
    if not output.parent.is_dir():
        fail(f"-o {output}: its directory {output.parent} does not exist")
