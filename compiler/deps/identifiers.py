"""Dependency identifiers: `host/owner/repo/path[@version]`, the `std/` and `co/`
shorthands, the files an identifier may name inside a clone, and where a clone comes from.

Pure functions of text (the URL map's relative paths aside): nothing here touches git or
the network, so the compiler, `prosec install` and the language server agree on them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

SUFFIX = ".prose.md"
INDEX = "index" + SUFFIX
# the OpenProse monorepo: `std/…` and `co/…` are two of its packages, in one clone
OPENPROSE = ("github.com", "openprose", "prose")
SHORTHANDS = {"std": "packages/std", "co": "packages/co"}
DEPS = "deps"  # beside prose.lock at the OpenProse root

_SEGMENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._~+-]*")
_VERSION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]*")
_HOST = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+(:[0-9]+)?")


class IdentifierError(ValueError):
    """The text is not an identifier prosec can resolve; the message says why."""


@dataclass(frozen=True, slots=True)
class Identifier:
    """`host/owner/repo` names a clone under deps/; `path` a file or folder inside it."""

    host: str
    owner: str
    repo: str
    path: str  # inside the repository, forward-slashed, "" for its root
    version: str | None  # `@sha` or `@tag`, when pinned
    text: str  # as written

    @property
    def repo_key(self) -> str:
        """`host/owner/repo`: the clone's folder under deps/ and its prose.lock entry."""
        return f"{self.host}/{self.owner}/{self.repo}"

    def candidates(self) -> tuple[str, ...]:
        """The files it may name, repository-relative, in the order they are tried."""
        return file_candidates(self.path)

    def locator(self, candidate: str) -> str:
        """`host/owner/repo/path.prose.md`: one file of one dependency, host included."""
        return f"{self.repo_key}/{candidate}"


def file_candidates(path: str) -> tuple[str, ...]:
    """`{path}.prose.md`, then `{path}/index.prose.md`; a path with the suffix as given."""
    path = path.strip("/")
    if not path:
        return (INDEX,)
    if path.endswith(SUFFIX):
        return (path,)
    return (f"{path}{SUFFIX}", f"{path}/{INDEX}")


def is_dependency(text: str) -> bool:
    """Whether `text` names a dependency: `std/…`, `co/…`, or a first segment that is a
    host (it contains a dot) followed by more segments."""
    text = text.strip()
    first, slash, _ = text.partition("/")
    if not slash or first in (".", "..") or not first:
        return False
    return first in SHORTHANDS or "." in first


def is_local(text: str) -> bool:
    """A path relative to the referring file: `./x`, `../x`, or a plain name (`helper`)."""
    text = text.strip()
    return text.startswith(("./", "../")) or ("/" not in text and not text.startswith("@"))


def parse(text: str) -> Identifier:
    """The identifier written as `text` (shorthands expanded); IdentifierError says why not."""
    written = text
    text = text.strip()
    if not text:
        raise IdentifierError("the dependency is empty")
    base, at, version = text.rpartition("@") if "@" in text else (text, "", "")
    if at and not _VERSION.fullmatch(version):
        raise IdentifierError(
            f"`@{version}` is not a version: write a commit (`@3f9c2e1`) or a tag (`@v1.2`) "
            "at the end of the identifier"
        )
    segments = base.split("/")
    if segments[0] in SHORTHANDS:
        if len(segments) < 2 or not any(segments[1:]):
            raise IdentifierError(f"`{base}` names no file of the `{segments[0]}/` package")
        host, owner, repo = OPENPROSE
        path_parts = [*SHORTHANDS[segments[0]].split("/"), *segments[1:]]
    elif "." in segments[0] and segments[0] not in (".", ".."):
        if len(segments) < 3 or not segments[1] or not segments[2]:
            raise IdentifierError(
                f"`{base}` needs an owner and a repository after the host: "
                f"`{segments[0]}/OWNER/REPO/path`"
            )
        host, owner, repo = segments[0].lower(), segments[1], segments[2]
        if not _HOST.fullmatch(host):
            raise IdentifierError(f"`{segments[0]}` is not a host name")
        path_parts = segments[3:]
    elif "/" in base and not base.startswith(("./", "../", "/")):
        raise IdentifierError(
            f"`{base}` has no host: bare `owner/repo` identifiers are reserved for the "
            "OpenProse registry, which resolves nothing yet; write the host "
            f"(`github.com/{base}`) or use the `std/` or `co/` shorthand"
        )
    elif base.startswith("/"):
        raise IdentifierError(f"`{base}` is absolute: write it relative to the referring file")
    else:
        raise IdentifierError(f"`{base}` is a local path, not a dependency")
    for part in (owner, repo):
        if not _SEGMENT.fullmatch(part) or part in (".", ".."):
            raise IdentifierError(f"`{part}` is not a valid owner or repository name")
    if path_parts and not path_parts[-1]:  # a trailing slash
        path_parts = path_parts[:-1]
    if any(part in ("", ".", "..") for part in path_parts):
        raise IdentifierError(f"`{base}` has an empty, `.` or `..` path segment")
    path = "/".join(path_parts)
    return Identifier(
        host=host,
        owner=owner,
        repo=repo,
        path=path,
        version=version if at else None,
        text=written,
    )


def local_candidates(text: str, directory: PurePosixPath) -> tuple[PurePosixPath, ...]:
    """The files a local reference may name, relative to the referring file's folder."""
    relative = text.strip().removeprefix("./")
    return tuple(directory / candidate for candidate in file_candidates(relative))


def clone_url(repo_key: str, urls: Mapping[str, str], root: Path) -> str:
    """Where `host/owner/repo` is cloned from: the longest `[deps]` key that is a prefix of
    it (`host`, `host/owner` or `host/owner/repo`) replaced by its value, as git's
    `url.<base>.insteadOf` does; else `https://host/owner/repo.git`. A value without a
    scheme is a path, relative to the OpenProse root."""
    parts = repo_key.split("/")
    for size in (3, 2, 1):
        prefix = "/".join(parts[:size])
        if prefix in urls:
            value = urls[prefix]
            rest = "/".join(parts[size:])
            if not _is_url(value):
                value = str((root / value).resolve())
            return f"{value.rstrip('/')}/{rest}" if rest else value
    return f"https://{repo_key}.git"


def _is_url(value: str) -> bool:
    """`scheme://…` or scp-like `user@host:path` (what git accepts besides paths)."""
    return "://" in value or bool(re.match(r"^[\w.-]+@[\w.-]+:", value))


def redact(text: str) -> str:
    """`https://user:token@host/…` → `https://***@host/…`: URLs in messages carry no secret."""
    return re.sub(r"(?<=://)[^/@\s]+@", "***@", text)
