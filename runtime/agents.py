"""Agent memory: where a node with `### Runtime` `persist` keeps its memory, and rotation.

A node's memory folder depends on its `persist` scope (the compiled intent's node
`runtime` key):

| persist   | folder                                                   | lifetime          |
|-----------|----------------------------------------------------------|-------------------|
| `true`    | `runs/{id}/agents/{name}/`                               | the run           |
| `project` | `state/agents/{name}/`                                   | the project       |
| `user`    | `{user root}/state/agents/{name}/`                       | every project     |
| a path    | that folder, relative to the OpenProse root             | the project       |

The user root is `$OPENPROSE_USER_ROOT`, else `~/.agents/prose`. On an ephemeral backend
(in-context) nothing is durable: every scope lives in the run's temporary folder.

The folder holds `memory.md` (the agent's compacted state, which it rewrites each
session; created with its heading when missing) and one segment record per session,
`{name}-001.md`, `{name}-002.md`, … (three digits, four past 999). A session is given
the next unused segment; after it ends, `rotate` closes that segment: when the agent
wrote none, the runtime writes a short record of the session (run, node, outcome), so
the numbering counts sessions and the next session always gets a fresh number.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .fsio import atomic_write_text

__all__ = [
    "AgentMemory",
    "MemoryUnavailable",
    "open_memory",
    "rotate",
    "segment_name",
    "user_root",
]

USER_ROOT_VARIABLE = "OPENPROSE_USER_ROOT"
MEMORY_FILE = "memory.md"
SCOPES = ("true", "project", "user", "path")


class MemoryUnavailable(ValueError):
    """The memory folder cannot be used (a file in its place, unwritable, …): the render
    that needs it fails with `memory-unavailable`, naming the folder."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentMemory:
    """One session's memory: the folder, `memory.md`, and this session's segment record."""

    name: str  # the agent: its node's name
    scope: str  # "true" | "project" | "user" | "path"
    directory: Path
    memory: Path
    segment: Path
    number: int  # the segment's number

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "scope": self.scope,
            "directory": str(self.directory),
            "memory": str(self.memory),
            "segment": str(self.segment),
            "number": self.number,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AgentMemory:
        return cls(
            name=str(data["name"]),
            scope=str(data["scope"]),
            directory=Path(data["directory"]),
            memory=Path(data["memory"]),
            segment=Path(data["segment"]),
            number=int(data["number"]),
        )


def user_root(env: Mapping[str, str] | None = None) -> Path:
    """`$OPENPROSE_USER_ROOT`, else `~/.agents/prose` (the user-global OpenProse root)."""
    env = os.environ if env is None else env
    given = env.get(USER_ROOT_VARIABLE)
    if given:
        return Path(given).expanduser()
    return Path("~/.agents/prose").expanduser()


def segment_name(name: str, number: int) -> str:
    """`captain-001.md`; four digits past 999 (`captain-1000.md`)."""
    return f"{name}-{number:03d}.md"


def memory_folder(
    runtime: Mapping[str, Any] | None,
    name: str,
    *,
    root: Path,
    run_dir: Path,
    ephemeral: bool = False,
    env: Mapping[str, str] | None = None,
) -> tuple[str, Path] | None:
    """(scope, folder) of a node's memory; None when its `### Runtime` asks for none."""
    scope = (runtime or {}).get("persist")
    if scope not in SCOPES:
        return None
    if ephemeral or scope == "true":
        return scope, run_dir / "agents" / name
    if scope == "project":
        return scope, root / "state" / "agents" / name
    if scope == "user":
        return scope, user_root(env) / "state" / "agents" / name
    path = str((runtime or {}).get("path", ""))
    return scope, root.joinpath(*path.split("/"))


def open_memory(
    runtime: Mapping[str, Any] | None,
    name: str,
    *,
    root: Path,
    run_dir: Path,
    ephemeral: bool = False,
    env: Mapping[str, str] | None = None,
) -> AgentMemory | None:
    """Make the node's memory folder ready for a session: `memory.md` exists and the next
    unused segment number is chosen. None for a node without `persist`."""
    found = memory_folder(runtime, name, root=root, run_dir=run_dir, ephemeral=ephemeral, env=env)
    if found is None:
        return None
    scope, directory = found
    memory = directory / MEMORY_FILE
    if scope == "path" and not ephemeral and not _inside(directory, root):
        raise MemoryUnavailable(
            f"the memory folder {directory} (persist: {scope}) is outside the project {root}"
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if not memory.exists() and not memory.is_symlink():
            atomic_write_text(memory, f"# Agent Memory: {name}\n")
        elif not memory.is_file():
            raise MemoryUnavailable(f"{memory} is not a file")
        number = _last_segment(directory, name) + 1
    except OSError as exc:
        raise MemoryUnavailable(
            f"the memory folder {directory} (persist: {scope}) cannot be used: "
            f"{exc.strerror or exc}"
        ) from None
    return AgentMemory(
        name=name,
        scope=scope,
        directory=directory,
        memory=memory,
        segment=directory / segment_name(name, number),
        number=number,
    )


def rotate(memory: AgentMemory, *, run_id: str, node: str, outcome: str) -> AgentMemory:
    """Close the session's segment (write the runtime's record of it when the agent wrote
    none) and return the memory the next session gets (the next segment number)."""
    if not memory.segment.exists() and not memory.segment.is_symlink():
        # the runtime's own record; a folder that vanished meanwhile loses only it
        with contextlib.suppress(OSError):
            atomic_write_text(
                memory.segment,
                f"# Segment {memory.number:03d}\n\n"
                f"run: {run_id}\nnode: {node}\noutcome: {outcome}\n\n"
                "The agent wrote no segment record for this session.\n",
            )
    number = memory.number + 1
    segment = memory.directory / segment_name(memory.name, number)
    return replace(memory, segment=segment, number=number)


def _inside(directory: Path, root: Path) -> bool:
    try:
        return directory.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        return False


def _last_segment(directory: Path, name: str) -> int:
    pattern = re.compile(rf"{re.escape(name)}-(\d{{3,}})\.md")
    numbers = [
        int(match.group(1))
        for entry in directory.iterdir()
        if (match := pattern.fullmatch(entry.name))
    ]
    return max(numbers, default=0)
