"""A ProseScript agent's `persist:` setting as the VM reads it, and the check that a
custom memory folder (`persist: "harbour/logs"`) stays inside the project.

`persist: true` (or `yes`) is the run's memory, `project` and `user` the durable
scopes (seed 004's 'execution', 'project', 'user'); `false`, `none` or no setting at
all is no memory; any other value is a folder relative to the OpenProse root, kept as
written (seed 004's 'custom' scope; runtime/agents.py scope "path"). A folder that
leaves the project, lexically (absolute, `~`, `..`) or through a symlink, is refused
before the run starts, naming the program file and line (`memory_problems`), and again
when a session opens the folder (agents.open_memory), in case a link appeared since.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .program import Program, script_nodes

__all__ = ["memory_problems", "memory_runtime", "path_problem", "persist_of"]

_SCOPES = {"true": "true", "yes": "true", "project": "project", "user": "user"}
_OFF = ("false", "none", "no", "")


def persist_of(value: Any) -> str | None:
    """The `persist:` value as an Ask carries it: "true" | "project" | "user", a custom
    folder as written, or None for no memory."""
    if value is None or value is False:
        return None
    if value is True:
        return "true"
    text = str(value).strip()
    if text.lower() in _OFF:
        return None
    return _SCOPES.get(text.lower(), text)


def memory_runtime(persist: str) -> dict[str, str]:
    """The `### Runtime` form agents.open_memory takes for a `persist_of` value."""
    if persist in ("true", "project", "user"):
        return {"persist": persist}
    return {"persist": "path", "path": _clean(persist) or persist}


def path_problem(root: Path, path: str) -> str | None:
    """Why the custom memory folder `path` cannot be used (None when it can): it must
    name a folder inside the project `root`, and resolve there (no symlink out)."""
    candidate = path.replace("\\", "/")
    if candidate.startswith(("/", "~")) or re.match(r"[A-Za-z]:", candidate):
        return "must be a folder inside the project, relative to its root"
    if ".." in candidate.split("/"):
        return "must not leave the project (`..`)"
    clean = _clean(path)
    if not clean:
        return "must name a folder inside the project"
    try:
        top = root.resolve()
        inside = root.joinpath(*clean.split("/")).resolve().is_relative_to(top)
    except (OSError, RuntimeError) as exc:  # a symlink loop
        return f"cannot be resolved ({exc})"
    if not inside:
        return "leaves the project through a symlink"
    return None


def memory_problems(program: Program, root: Path) -> list[str]:
    """One message per agent of the program whose custom memory folder is refused:
    `FILE:LINE: agent NAME: persist: "PATH" PROBLEM`."""
    problems = []
    for function in sorted(program.functions.values(), key=lambda f: f.name):
        for node in _agents(function.script or ()):
            for prop in node.get("properties") or ():
                if prop.get("key") != "persist":
                    continue
                value = prop.get("value") or {}
                if value.get("t") != "StringLit":
                    continue
                persist = persist_of(value.get("value"))
                if persist is None or persist in ("true", "project", "user"):
                    continue
                problem = path_problem(root, persist)
                if problem is not None:
                    line = prop.get("line") or node.get("line") or 0
                    problems.append(
                        f"{function.path or function.name}:{line}: agent {node.get('name')}: "
                        f"`persist: {persist!r}` {problem}"
                    )
    return sorted(set(problems))


def _clean(path: str) -> str:
    return "/".join(p for p in path.replace("\\", "/").split("/") if p not in ("", "."))


def _agents(node: Any) -> Iterator[Mapping[str, Any]]:
    return (found for found in script_nodes(node) if found.get("t") == "AgentDef")
