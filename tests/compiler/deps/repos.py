"""Real git repositories for the dependency tests: bare repositories under a mirror folder,
published to with fixed names and dates so their commits are the same on every machine."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

# no user or system configuration (signing, hooks, templates) reaches the fixtures
_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "prosec tests",
    "GIT_AUTHOR_EMAIL": "tests@example.org",
    "GIT_COMMITTER_NAME": "prosec tests",
    "GIT_COMMITTER_EMAIL": "tests@example.org",
}


def git(*args: str | os.PathLike[str], cwd: Path | None = None, date: str | None = None) -> str:
    env = {**os.environ, **_ENV}
    if date is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    done = subprocess.run(
        ["git", *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


class Mirror:
    """`root/OWNER/REPO` bare repositories (what `[deps] "HOST" = "<root>"` points at),
    each published from its own work tree under `work` (default: beside `root`)."""

    def __init__(self, root: Path, work: Path | None = None) -> None:
        self.root = root
        self.work = work or root.parent / f"{root.name}-work"

    def bare(self, repo: str) -> Path:
        return self.root / repo

    def publish(
        self,
        repo: str,
        files: Mapping[str, str | bytes | None],
        *,
        date: str = "2024-01-01T00:00:00Z",
        message: str = "publish",
        tag: str | None = None,
    ) -> str:
        """Write `files` (None deletes one) in `owner/repo`, commit on `main`, push; the sha."""
        bare, work = self.bare(repo), self.work / repo
        if not bare.exists():
            bare.mkdir(parents=True)
            git("init", "--quiet", "--bare", "--initial-branch=main", bare)
            work.mkdir(parents=True)
            git("init", "--quiet", "--initial-branch=main", work)
            git("remote", "add", "origin", bare, cwd=work)
        for name, content in files.items():
            path = work / name
            if content is None:
                path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            data = content.encode() if isinstance(content, str) else content
            path.write_bytes(data)
        git("add", "--all", cwd=work)
        git("commit", "--quiet", "--allow-empty", "-m", message, cwd=work, date=date)
        if tag is not None:
            git("tag", tag, cwd=work)
        git("push", "--quiet", "--tags", "origin", "main", cwd=work)
        return git("rev-parse", "HEAD", cwd=work)


def contract(name: str, kind: str, body: str = "", *, id: str | None = None) -> str:
    """A small `.prose.md` source."""
    head = f"---\nname: {name}\nkind: {kind}\n" + (f"id: {id}\n" if id else "") + "---\n"
    return f"{head}\n# {name.replace('-', ' ').title()}\n\n{body}"
