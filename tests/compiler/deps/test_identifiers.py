"""Identifiers: hosts, shorthands, pins, the files they may name, and clone URLs."""

from __future__ import annotations

from pathlib import Path

import pytest
from prosec.compiler.deps.identifiers import (
    IdentifierError,
    clone_url,
    file_candidates,
    is_dependency,
    parse,
    redact,
)


def test_an_explicit_host_names_owner_repo_and_path() -> None:
    found = parse("github.com/openprose/prose/packages/std/evals/inspector")
    assert (found.host, found.owner, found.repo) == ("github.com", "openprose", "prose")
    assert found.path == "packages/std/evals/inspector"
    assert found.repo_key == "github.com/openprose/prose"
    assert found.candidates() == (
        "packages/std/evals/inspector.prose.md",
        "packages/std/evals/inspector/index.prose.md",
    )
    assert found.version is None


@pytest.mark.parametrize(
    ("shorthand", "path"),
    [
        ("std/evals/inspector", "packages/std/evals/inspector"),
        ("co/systems/x", "packages/co/systems/x"),
    ],
)
def test_std_and_co_share_the_openprose_clone(shorthand: str, path: str) -> None:
    found = parse(shorthand)
    assert found.repo_key == "github.com/openprose/prose"
    assert found.path == path


def test_any_host_works_and_is_case_insensitive() -> None:
    assert parse("GitLab.com/team/repo/a").repo_key == "gitlab.com/team/repo"
    assert parse("git.example.org:8443/team/repo").host == "git.example.org:8443"


@pytest.mark.parametrize(
    ("text", "version", "path"),
    [
        ("github.com/alice/research@0.3.1", "0.3.1", ""),
        ("github.com/alice/research/flows/main@abc1234", "abc1234", "flows/main"),
        ("std/evals/inspector@v2", "v2", "packages/std/evals/inspector"),
    ],
)
def test_a_pin_ends_the_identifier(text: str, version: str, path: str) -> None:
    found = parse(text)
    assert (found.version, found.path) == (version, path)


def test_candidates_keep_an_explicit_suffix_and_default_to_index() -> None:
    assert file_candidates("tools/format.prose.md") == ("tools/format.prose.md",)
    assert file_candidates("") == ("index.prose.md",)
    assert parse("github.com/alice/research").candidates() == ("index.prose.md",)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("alice/research", "reserved for the OpenProse registry"),
        ("", "empty"),
        ("github.com/alice", "needs an owner and a repository"),
        ("std/", "names no file"),
        ("github.com/alice/research/../secrets", "`..` path segment"),
        ("github.com/alice/research/a//b", "empty"),
        ("github.com/alice/research@", "not a version"),
        ("github.com/alice/research@v1/x", "not a version"),
        ("/etc/passwd/x", "absolute"),
        ("exa_mple.com/alice/research", "not a host name"),
    ],
)
def test_what_is_not_an_identifier_says_why(text: str, reason: str) -> None:
    with pytest.raises(IdentifierError) as caught:
        parse(text)
    assert reason in str(caught.value)


def test_the_bare_form_suggests_the_explicit_host() -> None:
    with pytest.raises(IdentifierError) as caught:
        parse("alice/research")
    assert "github.com/alice/research" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("std/x", True),
        ("co/x", True),
        ("github.com/a/b", True),
        ("review-loop", False),
        ("patterns/review-loop", False),
        ("./helper", False),
        ("../common/helper", False),
        ("helper.prose.md", False),
    ],
)
def test_which_references_are_dependencies(text: str, expected: bool) -> None:
    assert is_dependency(text) is expected


def test_clone_urls_follow_the_longest_mapped_prefix(tmp_path: Path) -> None:
    urls = {
        "github.com": "https://mirror.example.com/gh",
        "github.com/openprose": "ssh://git@internal/openprose",
        "github.com/openprose/prose": "file:///srv/prose.git",
        "example.org": "mirrors/example",
    }
    assert (
        clone_url("github.com/alice/x", urls, tmp_path) == "https://mirror.example.com/gh/alice/x"
    )
    assert clone_url("github.com/openprose/x", urls, tmp_path) == "ssh://git@internal/openprose/x"
    assert clone_url("github.com/openprose/prose", urls, tmp_path) == "file:///srv/prose.git"
    relative = clone_url("example.org/acme/kit", urls, tmp_path)
    assert relative == f"{(tmp_path / 'mirrors/example').resolve()}/acme/kit"
    assert clone_url("gitlab.com/team/repo", urls, tmp_path) == "https://gitlab.com/team/repo.git"


def test_urls_in_messages_carry_no_credentials() -> None:
    text = "fatal: could not read https://user:s3cret@host.example/a/b.git"
    assert redact(text) == "fatal: could not read https://***@host.example/a/b.git"
