"""`prosec build`: compile a source tree into dist/manifest.next.json."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from .. import report
from ..build import BuildOptions, BuildOutcome, build
from ..discover import DiscoveryError
from ..host import REGISTRY_LIMIT, parse_registry
from ..report import plural
from .common import (
    codes_option,
    offline_option,
    project_config,
    strict_option,
    system_host,
)
from .errors import ExitCode, fail
from .inputs import read_input, require_dir
from .terminal import build_progress

# outcome.status → exit code; any other status (failed, stale) is ExitCode.FINDINGS
_EXIT = {
    "written": ExitCode.OK,
    "up-to-date": ExitCode.OK,
    "fresh": ExitCode.OK,
    "internal": ExitCode.INTERNAL,
}


@click.command(name="build")
@click.argument("root", required=False, default=".", type=click.Path(path_type=Path))
@click.option(
    "--check", is_flag=True, help="Exit 1 when dist/manifest.next.json is stale; write nothing."
)
@click.option(
    "--emit-artifacts",
    is_flag=True,
    default=None,
    help="Also write dist/canonicalizers/<node>.json and dist/postconditions/<node>.json.",
)
@strict_option
@offline_option
@click.option(
    "--mcp-registry", multiple=True, metavar="FILE", help="An MCP registry file (repeatable)."
)
@click.option(
    "--skill-path",
    multiple=True,
    metavar="DIR",
    help="A skill directory searched first (repeatable).",
)
@click.option(
    "--no-cache", is_flag=True, help="Neither read nor write the build cache; rebuild everything."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(report.FORMATS),
    default="text",
    show_default=True,
    help="How diagnostics are printed on stdout.",
)
@codes_option("--select", "Only report these codes (comma-separated; `prefix*` allowed).")
@codes_option("--ignore", "Never report these codes (comma-separated; `prefix*` allowed).")
@click.option("-q", "--quiet", is_flag=True, help="Do not print the summary line on stderr.")
def build_command(
    root: Path,
    check: bool,
    emit_artifacts: bool | None,
    strict: bool | None,
    offline_tools: bool | None,
    mcp_registry: tuple[str, ...],
    skill_path: tuple[str, ...],
    no_cache: bool,
    fmt: str,
    select: tuple[str, ...] | None,
    ignore: tuple[str, ...] | None,
    quiet: bool,
) -> None:
    """Compile ROOT (default: the current directory) into dist/manifest.next.json.

    Sources are read from ROOT/src when it exists, else from ROOT (or `[build] source`
    in prose.toml). The pipeline parses, checks, expands patterns, wires needs with
    Forme, lowers canonicalizers and postconditions, fingerprints contracts, validates
    the compiled intent against its schema and writes it atomically. With any error
    nothing is written. A rebuild reuses the build cache (in the user cache directory,
    or $PROSEC_CACHE_DIR) and says why when it cannot.

    \b
    Examples:
      prosec build
      prosec build --check                 # CI: is the committed manifest current?
      prosec build --strict --offline-tools examples/inbox

    Exit status: 0 written or up to date, 1 errors or a stale manifest (--check),
    2 usage or I/O problem, 3 internal error.
    """
    for skills in skill_path:
        require_dir(Path(skills), "--skill-path")
    for registry in mcp_registry:  # read now: a flag names a file that must be there
        data = read_input(Path(registry), REGISTRY_LIMIT, "--mcp-registry")
        try:
            parse_registry(data.decode("utf-8"))
        except ValueError as exc:  # not UTF-8, or JSON that is not a registry
            fail(f"--mcp-registry {registry}: not an MCP registry: {exc}")
    config = project_config(
        root,
        strict=strict,
        offline_tools=offline_tools,
        mcp_registries=mcp_registry,
        skill_paths=skill_path,
        select=select,
        ignore=ignore,
    )
    options = BuildOptions(
        check=check,
        emit_artifacts=config.emit_artifacts if emit_artifacts is None else emit_artifacts,
        cache_dir=None if no_cache else cache_base(),
    )
    try:
        with build_progress(not quiet and sys.stderr.isatty()) as progress:
            outcome = build(root, config, system_host(root, config), options, progress)
    except DiscoveryError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write the build output: {exc}")
    sys.stdout.write(report.render(outcome.diagnostics, fmt))
    if not quiet:
        click.echo(_summary(outcome), err=True)
    sys.exit(_EXIT.get(outcome.status, ExitCode.FINDINGS))


def cache_base() -> Path:
    """Where build caches live: $PROSEC_CACHE_DIR, else the user cache directory.

    Outside the project, as black and ruff do: a file a project tree can hold (a commit,
    an archive) is never read as a cache.
    """
    override = os.environ.get("PROSEC_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("prosec"))


def _summary(outcome: BuildOutcome) -> str:
    s = outcome.summary
    counts = (
        f"{plural(s.get('nodes', 0), 'node')}, {plural(s.get('edges', 0), 'edge')}; "
        f"{plural(s.get('error', 0), 'error')}, {plural(s.get('warning', 0), 'warning')}, "
        f"{plural(s.get('info', 0), 'info', 'info')} in {plural(s.get('files', 0), 'file')}"
    )
    head = {
        "written": "prosec: wrote "
        + ", ".join(outcome.written[:1])
        + (f" (+{len(outcome.written) - 1} artifacts)" if len(outcome.written) > 1 else ""),
        "up-to-date": "prosec: dist/manifest.next.json is up to date",
        "fresh": "prosec: dist/manifest.next.json is current",
        "stale": "prosec: dist/manifest.next.json is stale; run `prosec build`",
        "failed": "prosec: build failed; nothing written",
        "internal": "prosec: internal error; nothing written",
    }[outcome.status]
    return f"{head} — {counts} ({outcome.note})"
