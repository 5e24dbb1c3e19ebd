"""The git client: streamed clone progress, commits, tags, status, redacted failures."""

from __future__ import annotations

from pathlib import Path

import pytest
from prosec.compiler.deps.git import Git, GitError, default_head, is_clone

from .repos import Mirror, git


def test_a_streamed_clone_forwards_progress_and_checks_out(tmp_path: Path) -> None:
    mirror = Mirror(tmp_path / "mirror")
    first = mirror.publish("acme/lib", {"a.prose.md": "one\n"}, tag="v1")
    second = mirror.publish("acme/lib", {"a.prose.md": "two\n"})
    seen: list[str] = []
    client = Git(stream=seen.append)
    dest = tmp_path / "clone"
    client.clone(str(mirror.bare("acme/lib")), dest)
    assert "Cloning into" in "".join(seen)
    assert is_clone(dest) and not (dest / "a.prose.md").exists()  # no checkout yet
    assert default_head(client, dest) == second
    assert client.commit(dest, "v1") == first
    assert client.commit(dest, "no-such-tag") is None
    client.checkout(dest, first)
    assert (dest / "a.prose.md").read_text() == "one\n"
    assert client.changes(dest) == []
    (dest / "a.prose.md").write_text("edited\n")
    (dest / "new file.md").write_text("x\n")
    assert [(c.status, c.path) for c in client.changes(dest)] == [
        ("modified", "a.prose.md"),
        ("untracked", "new file.md"),
    ]
    third = mirror.publish("acme/lib", {"b.prose.md": "three\n"}, date="2026-01-01T00:00:00Z")
    assert client.remote_head(dest) == third
    assert client.commit_time(dest, third) == 1767225600


def test_failures_name_the_command_and_what_git_said(tmp_path: Path) -> None:
    client = Git()
    with pytest.raises(GitError) as caught:
        client.clone(str(tmp_path / "none"), tmp_path / "x")
    message = str(caught.value)
    assert message.startswith("git clone failed: ") and "does not exist" in message
    with pytest.raises(GitError, match="not found on PATH"):
        Git(executable="no-such-git-binary").run(["--version"])


def test_the_fixture_commits_are_reproducible(tmp_path: Path) -> None:
    one = Mirror(tmp_path / "one").publish("a/b", {"x.md": "x\n"})
    two = Mirror(tmp_path / "two").publish("a/b", {"x.md": "x\n"})
    assert one == two == git("rev-parse", "main", cwd=tmp_path / "one" / "a" / "b")
