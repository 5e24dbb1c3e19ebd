"""prose.toml, read and checked in one place: the whole file against config.schema.json.

Every command of the compiler and the runtime, the language server and the pytest plugin
load a project's settings through `load`, so a file one of them accepts the others accept
too, and a bad one fails everywhere with the same `ConfigError`: the file, each bad key as
a dotted path (`lint.ignore[0]`, `render.digest.kind`) and, when it can be found, its line.
The compiler's `Config` and the runtime's `RunConfig` are built from the checked data.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .userjson import JSONInputError, read_limited

__all__ = [
    "CONFIG_NAME",
    "ROOT_MARKERS",
    "ConfigError",
    "ConfigProblem",
    "DotEnv",
    "ProjectToml",
    "dependency_urls",
    "dotted",
    "find_root",
    "load",
    "load_dotenv",
]

CONFIG_NAME = "prose.toml"
ROOT_MARKERS = (CONFIG_NAME, "prose.lock")
SCHEMA = "config.schema.json"
CONFIG_LIMIT = 16 << 20  # bytes of a prose.toml
DOTENV_NAME = ".env"
DOTENV_LIMIT = 1 << 20  # bytes of a .env


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigProblem:
    """One bad setting: its dotted key ("" for the file as a whole), what is wrong, its line."""

    key: str
    message: str
    line: int | None = None


class ConfigError(ValueError):
    """prose.toml cannot be read or holds an invalid setting (exit 2 in every command).

    Its message has one line per problem, `FILE[:LINE]: KEY: what is wrong`."""

    def __init__(self, path: Path, problems: Sequence[ConfigProblem]) -> None:
        self.path = path
        self.problems = tuple(problems)
        super().__init__("\n".join(_format(path, problem) for problem in self.problems))


def _format(path: Path, problem: ConfigProblem) -> str:
    where = f"{path}:{problem.line}" if problem.line else str(path)
    return (
        f"{where}: {problem.key}: {problem.message}"
        if problem.key
        else f"{where}: {problem.message}"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectToml:
    """A prose.toml that passed the checks: its data and where each key is written."""

    path: Path
    data: Mapping[str, Any]
    lines: Mapping[str, int]  # dotted key → the line that first mentions it

    def line_of(self, location: Sequence[str | int]) -> int | None:
        """The line of the key at `location`, else of its nearest enclosing key or table."""
        return _line_of(self.lines, location)


@dataclass(frozen=True, slots=True, kw_only=True)
class DotEnv:
    """`ROOT/.env` (the seed's simple `KEY=value` file): each key's value and line."""

    path: Path
    values: Mapping[str, str]
    lines: Mapping[str, int]

    def get(self, key: str) -> str | None:
        return self.values.get(key)

    def where(self, key: str) -> str:
        """`/…/ROOT/.env:3`, for messages about the key's value (never the value itself)."""
        line = self.lines.get(key)
        return f"{self.path}:{line}" if line else str(self.path)


_DOTENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def load_dotenv(root: Path) -> DotEnv:
    """Read `ROOT/.env`: `KEY=value` lines (an `export ` prefix and one pair of matching
    quotes around the value allowed), `#` comments and blank lines; the last assignment of
    a key wins; other lines are not settings and are left alone. A missing or unreadable
    file (a folder, a FIFO, more than 1 MiB) holds no settings. Every part of prosec that
    reads `.env` (the run settings, the PostgreSQL backend) reads it here."""
    path = root / DOTENV_NAME
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    try:
        text = read_limited(path, DOTENV_LIMIT, what="").decode("utf-8", errors="replace")
    except (JSONInputError, OSError):
        return DotEnv(path=path, values=values, lines=lines)
    for number, raw in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.removeprefix("export ").partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not _DOTENV_KEY.fullmatch(key):
            continue
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[key] = value
        lines[key] = number
    return DotEnv(path=path, values=values, lines=lines)


def dependency_urls(checked: ProjectToml | None) -> dict[str, str]:
    """`[deps]`: `host`, `host/owner` or `host/owner/repo` → the URL (or the path, relative
    to the OpenProse root) `prosec install` clones it from instead (schema-checked)."""
    table = checked.data.get("deps", {}) if checked is not None else {}
    return {str(key): str(value) for key, value in table.items()}


def find_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding `prose.toml` or `prose.lock`."""
    start = start.resolve()
    if start.is_file():
        start = start.parent
    for candidate in (start, *start.parents):
        # any entry counts, so a prose.toml that is a folder, a FIFO or a broken link
        # is reported by `load` instead of silently skipped for a root further up
        if any(os.path.lexists(candidate / marker) for marker in ROOT_MARKERS):
            return candidate
    return None


def load(root: Path) -> ProjectToml | None:
    """The checked `ROOT/prose.toml`; None when there is none; ConfigError when it is bad."""
    given = root / CONFIG_NAME
    if not given.exists() and not given.is_symlink():
        return None
    try:
        path = given.resolve()
    except (OSError, RuntimeError):  # a symlink loop
        path = given.absolute()
    try:
        text = read_limited(given, CONFIG_LIMIT, what="").decode("utf-8")
    except JSONInputError as exc:  # a directory, FIFO, broken link or link loop
        raise ConfigError(given, [ConfigProblem(key="", message=str(exc))]) from None
    except UnicodeDecodeError as exc:
        problem = ConfigProblem(key="", message=f"cannot read: not UTF-8 (byte {exc.start})")
        raise ConfigError(given, [problem]) from None
    return check(text, path)


def check(text: str, path: Path) -> ProjectToml:
    """Parse `text` (the content of `path`) and check every key against the config schema."""
    text = text.removeprefix("\ufeff")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        problem = ConfigProblem(
            key="", message=f"invalid TOML: {exc}", line=int(found.group(1)) if found else None
        )
        raise ConfigError(path, [problem]) from None
    except RecursionError:
        problem = ConfigProblem(key="", message="invalid TOML: nested too deeply")
        raise ConfigError(path, [problem]) from None
    lines = key_lines(text)
    problems = _problems(data, lines)
    source = data.get("build", {}).get("source") if isinstance(data.get("build"), dict) else None
    if not problems and isinstance(source, str):
        message = _source_problem(source, path.parent)
        if message is not None:
            problems.append(
                ConfigProblem(key="build.source", message=message, line=lines.get("build.source"))
            )
    if problems:
        raise ConfigError(path, problems)
    return ProjectToml(path=path, data=data, lines=lines)


def _problems(data: Mapping[str, Any], lines: Mapping[str, int]) -> list[ConfigProblem]:
    from .cadence import parse_cadence
    from .schema_fast import certainly_valid

    by_key: dict[tuple[str | int, ...], list[str]] = {}
    if not certainly_valid(data, SCHEMA):  # jsonschema only for a doubtful file
        from .schemas import locate

        for finding in locate(data, SCHEMA):
            by_key.setdefault(finding.location, []).append(finding.message)
    cadences = data.get("cadence")
    if isinstance(cadences, Mapping):
        for node, text in cadences.items():
            if not isinstance(text, str):
                continue
            try:
                parse_cadence(text)
            except ValueError as exc:  # the grammar's own words, or a schedule that never fires
                by_key[("cadence", node)] = [str(exc)]
    problems = [
        ConfigProblem(key=dotted(location), message=message, line=_line_of(lines, location))
        for location, messages in by_key.items()
        for message in messages
    ]
    return sorted(problems, key=lambda problem: (problem.line or 0, problem.key, problem.message))


def _source_problem(source: str, root: Path) -> str | None:
    """Why `[build] source` does not name a folder inside the project (None when it does):
    an absolute path, `..`, a symlink that leads out, or no such folder. A build reads only
    its project, and every command (lint too) refuses the setting alike."""
    if Path(source).is_absolute() or ".." in re.split(r"[\\/]", source):
        return f"{source!r} must be a path inside the project, relative to its root"
    try:
        inside = (root / source).resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        inside = False
    if not inside:
        return f"{source!r} resolves outside the project (through a symlink)"
    if not (root / source).is_dir():
        return f"{source!r} is not a directory of the project"
    return None


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def dotted(location: Sequence[str | int]) -> str:
    """`("wiring", "pin", 0, "need")` → `wiring.pin[0].need`; odd keys quoted as TOML does."""
    out = ""
    for part in location:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        key = part if _BARE_KEY.fullmatch(part) else '"' + part.replace('"', '\\"') + '"'
        out += f".{key}" if out else key
    return out


def _line_of(lines: Mapping[str, int], location: Sequence[str | int]) -> int | None:
    for end in range(len(location), 0, -1):
        line = lines.get(dotted(location[:end]))
        if line is not None:
            return line
    return None


_KEY_PART = r'\s*(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|\'[^\']*\')\s*'
_KEY = re.compile(rf"{_KEY_PART}(?:\.{_KEY_PART})*")
_TABLE = re.compile(rf"\[({_KEY.pattern})\]\s*(?:#.*)?$")
_ARRAY_TABLE = re.compile(rf"\[\[({_KEY.pattern})\]\]\s*(?:#.*)?$")
_ASSIGNMENT = re.compile(rf"({_KEY.pattern})=")


def key_lines(text: str) -> dict[str, int]:
    """Where each key is written: table headers, `[[array]]` entries (`wiring.pin[1]`) and
    `key = value` lines, by dotted key. Best effort: values spread over several lines
    (multi-line strings and arrays) are skipped, not parsed."""
    lines: dict[str, int] = {}
    table: tuple[str | int, ...] = ()
    entries: dict[str, int] = {}  # `[[name]]` headers seen so far
    in_string = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if in_string:
            in_string = (line.count('"""') + line.count("'''")) % 2 == 0
            continue
        if not line or line.startswith("#"):
            continue
        if match := _ARRAY_TABLE.match(line):
            name = _parts(match.group(1))
            index = entries.get(dotted(name), 0)
            entries[dotted(name)] = index + 1
            table = (*name, index)
            for end in range(1, len(table) + 1):
                lines.setdefault(dotted(table[:end]), number)
        elif match := _TABLE.match(line):
            table = _parts(match.group(1))
            for end in range(1, len(table) + 1):
                lines.setdefault(dotted(table[:end]), number)
        elif match := _ASSIGNMENT.match(line):
            key = (*table, *_parts(match.group(1)))
            for end in range(len(table) + 1, len(key) + 1):
                lines.setdefault(dotted(key[:end]), number)
            in_string = (line.count('"""') + line.count("'''")) % 2 == 1
    return lines


def _parts(key: str) -> tuple[str, ...]:
    """A TOML dotted key (`render."mail.feed".kind`) → its parts, unquoted."""
    parts = []
    for match in re.finditer(_KEY_PART, key):
        part = match.group(0).strip()
        if part[:1] == '"':
            part = part[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        elif part[:1] == "'":
            part = part[1:-1]
        parts.append(part)
    return tuple(parts)
