"""`prosec preflight [PATH]`: check a program's dependencies and environment before a run."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from .errors import ExitCode, fail
from .inputs import require_dir


@click.command(name="preflight")
@click.argument("path", required=False, default=".", type=click.Path(path_type=Path))
def preflight_command(path: Path) -> None:
    """Check that a program can run: every `use`, `pattern:` and `### Services` reference
    resolves; every dependency is installed in deps/ at the commit prose.lock pins, with
    nothing changed in its working tree; every `### Environment` variable is set (an
    item whose text says "optional" may be missing). Only presence is checked: no value
    is ever printed.

    PATH is a project (its build sources are checked) or one `.prose.md` file (that file
    and what it references). One `pass` / `fail` line per check on stdout, then the
    verdict.

    Exit status: 0 pass, 1 fail, 2 bad PATH, prose.toml or prose.lock.
    """
    from ..deps import load_from_disk
    from ..deps.lock import LockError, read_lock
    from ..deps.preflight import preflight
    from ..discover import SUFFIX
    from ..legacy_compile import legacy_forms
    from ..lint import parse_texts
    from ..pipeline import read_sources
    from .common import load_config
    from .install import git_client, project_root

    single = path.is_file()
    if single and not path.name.endswith(SUFFIX):
        fail(f"{path}: not a `{SUFFIX}` file or a project folder")
    if not single:
        require_dir(path)
    root = project_root((path.parent if single else path).resolve())
    config = load_config(root)
    if single:
        from ..discover import SourceRef, display_path
        from ..lint import read_source

        display = display_path(path.resolve(), root)
        text, problem = read_source(SourceRef(display, path))
        if text is None:
            fail(f"{path}: {problem.message if problem is not None else 'unreadable'}")
        texts = [(display, text)]
    else:
        texts, _ = read_sources(root, config)
        texts += legacy_forms(root, config)  # what legacy programs `use` is checked too
    project, _ = parse_texts(texts)
    try:
        lock = read_lock(root)
    except LockError as exc:
        fail(str(exc))
    loaded = load_from_disk(project, root, root)
    checks = preflight(root, loaded, lock, git_client(progress=False), os.environ)
    for check in checks:
        click.echo(check.line())
    failed = sum(1 for check in checks if not check.ok)
    verdict = "pass" if not failed else f"fail ({failed} problem{'s' if failed != 1 else ''})"
    click.echo(f"preflight: {verdict}")
    sys.exit(ExitCode.FINDINGS if failed else ExitCode.OK)
