"""The `git` command-line client: the only way prosec touches a repository (`prosec install`
and `prosec preflight`; compiling and running never do). Every call is a subprocess with
fixed, machine-readable output formats; failures are GitError with URLs redacted."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .identifiers import redact

_TAIL = 4000  # characters of git's stderr kept for an error message


class GitError(Exception):
    """A git command failed (or git is not installed); the message says which and why."""


@dataclass(frozen=True, slots=True)
class Change:
    """One entry of `git status`: a tracked file that differs, or a file git does not know."""

    path: str
    status: str  # "modified", "deleted", "added", "untracked", …


@dataclass(slots=True)
class Git:
    """Runs `executable` with `env` (None: this process's); `stream` receives a clone's
    progress output as it comes (None: kept quiet)."""

    executable: str = "git"
    env: Mapping[str, str] | None = None
    stream: Callable[[str], None] | None = None
    timeout: float = 3600.0
    calls: list[tuple[str, ...]] = field(default_factory=list)  # for tests and --verbose

    def available(self) -> bool:
        return shutil.which(self.executable) is not None

    def run(self, args: Sequence[str], cwd: Path | None = None) -> str:
        """`git ARGS` in `cwd`; its stdout, or GitError with its stderr."""
        command = (self.executable, *args)
        self.calls.append(tuple(args))
        try:
            done = subprocess.run(
                command,
                cwd=cwd,
                env=dict(self.env) if self.env is not None else None,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except FileNotFoundError:
            raise GitError(f"`{self.executable}` was not found on PATH: install git") from None
        except subprocess.TimeoutExpired:
            raise GitError(f"git {args[0]} took longer than {self.timeout:.0f} s") from None
        if done.returncode != 0:
            raise GitError(_failure(args, done.stderr))
        return done.stdout

    def clone(self, url: str, dest: Path) -> None:
        """A full clone without a checkout (the caller checks out the chosen commit)."""
        args = ["clone", "--no-checkout", "--quiet", "--", url, str(dest)]
        if self.stream is None:
            self.run(args)
            return
        self._streamed(["clone", "--no-checkout", "--progress", "--", url, str(dest)])

    def _streamed(self, args: list[str]) -> None:
        """Run with stderr forwarded as it arrives (git's progress), its tail kept."""
        assert self.stream is not None
        self.calls.append(tuple(args))
        try:
            process = subprocess.Popen(
                (self.executable, *args),
                env=dict(self.env) if self.env is not None else None,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        except FileNotFoundError:
            raise GitError(f"`{self.executable}` was not found on PATH: install git") from None
        assert process.stderr is not None
        tail = ""
        deadline = time.monotonic() + self.timeout
        while chunk := os.read(process.stderr.fileno(), 4096):
            text = chunk.decode("utf-8", "replace")
            tail = (tail + text)[-_TAIL:]
            self.stream(redact(text))
            if time.monotonic() > deadline:
                process.kill()
                break
        if process.wait() != 0:
            raise GitError(_failure(args, tail))

    def checkout(self, repo: Path, sha: str) -> None:
        self.run(["-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", sha], repo)

    def commit(self, repo: Path, revision: str) -> str | None:
        """The full commit sha `revision` (a sha, tag, branch, HEAD) names, None if none."""
        try:
            out = self.run(["rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"], repo)
        except GitError:
            return None
        return out.strip() or None

    def fetch(self, repo: Path) -> None:
        """Every branch and tag of `origin`."""
        self.run(["fetch", "--quiet", "--tags", "--force", "origin"], repo)

    def remote_head(self, repo: Path) -> str:
        """The commit at the tip of `origin`'s default branch, as `origin` says now."""
        self.run(["fetch", "--quiet", "origin", "HEAD"], repo)
        found = self.commit(repo, "FETCH_HEAD")
        if found is None:
            raise GitError(f"{repo}: origin has no default branch to follow")
        return found

    def commit_time(self, repo: Path, sha: str) -> int:
        """The commit's committer time (seconds since the epoch)."""
        return int(self.run(["show", "-s", "--format=%ct", sha], repo).strip() or 0)

    def changes(self, repo: Path) -> list[Change]:
        """Files that differ from the checked-out commit, untracked ones included."""
        out = self.run(["status", "--porcelain=v1", "--untracked-files=all", "-z"], repo)
        found = []
        entries = out.split("\0")
        index = 0
        while index < len(entries):
            entry = entries[index]
            index += 1
            if len(entry) < 4:
                continue
            code, path = entry[:2], entry[3:]
            if code[0] in "RC":  # a rename carries its source as the next entry
                index += 1
            found.append(Change(path=path, status=_STATUS.get(code.strip()[:1], "changed")))
        return found


_STATUS = {"M": "modified", "D": "deleted", "A": "added", "?": "untracked", "R": "renamed"}


def _failure(args: Sequence[str], stderr: str) -> str:
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    detail = lines[-1] if lines else "no message"
    return redact(f"git {args[0]} failed: {detail}")


def is_clone(path: Path) -> bool:
    """A working tree with its own repository (not a plain copy of files)."""
    return (path / ".git").is_dir()


def default_head(git: Git, repo: Path) -> str | None:
    """The commit a fresh clone's HEAD points at (its default branch), None when empty."""
    return git.commit(repo, "refs/remotes/origin/HEAD") or git.commit(repo, "HEAD")
