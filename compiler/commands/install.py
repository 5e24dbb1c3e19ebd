"""`prosec install [ROOT]`: clone the dependencies the sources reference into deps/ and pin
them in prose.lock (the only command besides `preflight` that runs git)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .errors import ExitCode, fail
from .inputs import require_dir

if TYPE_CHECKING:
    from ..deps.git import Git
    from ..deps.install import InstallReport


def project_root(path: Path) -> Path:
    """The OpenProse root for PATH: the nearest folder with prose.toml or prose.lock at or
    above it, else PATH itself."""
    from ..config import find_root

    return find_root(path) or path


def git_client(*, progress: bool) -> Git:
    """git with this process's environment; never prompting for a password unless a person
    is at the terminal, and streaming clone progress when stderr is one."""
    from ..deps.git import Git

    env = dict(os.environ)
    if not sys.stdin.isatty():
        env["GIT_TERMINAL_PROMPT"] = "0"
    stream = None
    if progress and sys.stderr.isatty():
        stream = lambda text: click.echo(text, err=True, nl=False)  # noqa: E731
    return Git(env=env, stream=stream)


@click.command(name="install")
@click.argument("root", required=False, default=".", type=click.Path(path_type=Path))
@click.option(
    "--update",
    is_flag=True,
    help="Move every dependency to the head of its default branch (pinned `@versions` stay).",
)
@click.option(
    "--frozen",
    is_flag=True,
    help="For CI: install what prose.lock says and fail when prose.lock would change.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress or summary on stderr.")
def install_command(root: Path, update: bool, frozen: bool, quiet: bool) -> None:
    """Install the dependencies the sources reference into deps/ and pin them in prose.lock.

    Scans the build sources (ROOT/src, or `[build] source`) for `use "…"` statements,
    `pattern:` references and legacy `### Services` entries that name a dependency
    (`host/owner/repo/path`, `std/…`, `co/…`), clones each repository with git into
    deps/HOST/OWNER/REPO/ at the commit prose.lock pins (the default branch's head for a
    new one, or the version an `@sha` / `@tag` pins), then scans what it cloned, until
    nothing new appears. Repositories requiring each other are an error; two requirers
    pinning different commits get the newer one, with a warning. prose.lock is written
    sorted. Commit prose.lock; keep deps/ out of version control.

    \b
    prose.toml's [deps] table maps hosts to other URLs, like git's insteadOf:
      [deps]
      "github.com" = "https://mirror.example.com/github"
      "example.org/acme" = "../mirrors/acme"     # a path, relative to ROOT

    Exit status: 0 installed, 1 install failed (a clone, a cycle, local changes in deps/,
    an unresolvable reference, or with --frozen a prose.lock that would change), 2 bad
    ROOT, prose.toml or prose.lock.
    """
    from ..deps import load_from_disk
    from ..deps.git import GitError
    from ..deps.install import InstallError, InstallOptions, install
    from ..deps.lock import LockError
    from ..legacy_compile import legacy_forms
    from ..lint import parse_texts
    from ..pipeline import read_sources
    from .common import load_config

    if update and frozen:
        fail("--update and --frozen contradict each other: choose one")
    require_dir(root)
    root = project_root(root.resolve())
    config = load_config(root)
    texts, _ = read_sources(root, config)
    project, _ = parse_texts(texts + legacy_forms(root, config))  # legacy programs' `use`s
    git = git_client(progress=not quiet)
    if not git.available():
        fail("`git` was not found on PATH: prosec install clones with the git command-line client")

    def log(line: str) -> None:
        if not quiet:
            click.echo(f"prosec: {line}", err=True)

    options = InstallOptions(update=update, frozen=frozen, urls=config.dependency_urls)
    try:
        report = install(root, project, lambda p: load_from_disk(p, root, root), git, options, log)
    except LockError as exc:
        fail(str(exc))
    except (InstallError, GitError) as exc:
        click.echo(f"prosec: install failed: {exc}", err=True)
        sys.exit(ExitCode.FINDINGS)
    for warning in report.warnings:
        click.echo(f"prosec: warning: {warning}", err=True)
    for repo, sha in sorted(report.lock.entries.items()):
        click.echo(f"{repo} {sha}")
    if not quiet:
        click.echo(f"prosec: {_summary(report, frozen)}", err=True)
    sys.exit(ExitCode.OK)


def _summary(report: InstallReport, frozen: bool) -> str:
    count = len(report.lock.entries)
    if not count and not report.dropped:
        return "no dependencies to install"
    parts = [f"{count} dependenc{'y' if count == 1 else 'ies'} installed"]
    details = []
    if report.cloned:
        details.append(f"{len(report.cloned)} cloned")
    if report.moved:
        details.append(f"{len(report.moved)} moved")
    if details:
        parts[0] += f" ({', '.join(details)})"
    if report.dropped:
        parts.append(f"no longer needed: {', '.join(report.dropped)} (left in deps/)")
    if frozen:
        parts.append("prose.lock matches")
    else:
        parts.append("prose.lock written" if report.written else "prose.lock unchanged")
    return "; ".join(parts)
