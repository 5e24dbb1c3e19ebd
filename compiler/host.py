"""Host lookups behind a protocol: executables on PATH, MCP registries, installed skills.

The build resolves `### Tools` and `### Skills` declarations against a `Host`; tests pass
a fake one. An MCP registry is a file that lists the MCP servers the host advertises:

* JSON with an `mcpServers` (Claude, Cursor) or `servers` (VS Code) object keyed by
  server name, or a JSON array of server names;
* any other file: one server name per line, `#` starts a comment.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from prosec.runtime.userjson import loads, read_limited

REGISTRY_LIMIT = 16 << 20  # bytes of an MCP registry file

# Searched in this order after any `[tools] skill_paths`; the first is project-relative.
SKILL_SEARCH_PATH = ("./skills", "~/.claude/skills", "~/.codex/skills", "~/.agents/skills")


class Host(Protocol):
    """What the build may ask about the machine it runs on."""

    def find_executable(self, name: str) -> bool: ...

    def mcp_servers(self) -> Mapping[str, str]:
        """Registered MCP server name → the registry (as configured) that lists it."""
        ...

    def mcp_registries(self) -> tuple[str, ...]:
        """The registries consulted, as configured, with a note when one is unreadable."""
        ...

    def find_skill(self, namespace: str, name: str) -> str | None:
        """The search-path entry (as displayed) holding the skill, or None."""
        ...

    def skill_search_path(self) -> tuple[str, ...]: ...


@dataclass
class SystemHost:
    """The real machine: PATH lookups, registry files and skill directories."""

    root: Path
    path_env: str | None
    home: Path
    registries: Sequence[str] = ()
    skill_paths: Sequence[str] = ()
    _servers: dict[str, str] | None = field(default=None, repr=False)
    _notes: dict[str, str] = field(default_factory=dict, repr=False)

    def find_executable(self, name: str) -> bool:
        return shutil.which(name, path=self.path_env) is not None

    def mcp_servers(self) -> Mapping[str, str]:
        if self._servers is None:
            self._servers = {}
            for registry in self.registries:
                try:
                    data = read_limited(self._resolve(registry), REGISTRY_LIMIT)
                    names = parse_registry(data.decode("utf-8"))
                except ValueError as exc:  # unreadable, not UTF-8, not a registry
                    self._notes[registry] = f"unreadable: {type(exc).__name__}"
                    continue
                for name in names:
                    self._servers.setdefault(name, registry)
        return self._servers

    def mcp_registries(self) -> tuple[str, ...]:
        self.mcp_servers()
        return tuple(f"{r} ({self._notes[r]})" if r in self._notes else r for r in self.registries)

    def find_skill(self, namespace: str, name: str) -> str | None:
        for entry in self.skill_search_path():
            base = self._resolve(entry)
            candidates = [base / name]
            if namespace:
                candidates.insert(0, base / namespace / name)
            if any(candidate.is_dir() for candidate in candidates):
                return entry
        return None

    def skill_search_path(self) -> tuple[str, ...]:
        return (*self.skill_paths, *SKILL_SEARCH_PATH)

    def _resolve(self, entry: str) -> Path:
        if entry.startswith("~"):
            return self.home / entry[1:].lstrip("/")
        path = Path(entry)
        return path if path.is_absolute() else self.root / path


def parse_registry(text: str) -> list[str]:
    """Server names listed by one registry file (format in the module docstring)."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        data: Any = loads(text, source="")
        if isinstance(data, list):
            return [str(name) for name in data if isinstance(name, str)]
        if isinstance(data, dict):
            servers = data.get("mcpServers", data.get("servers", {}))
            if isinstance(servers, dict):
                return [str(name) for name in servers]
        raise ValueError("expected `mcpServers`/`servers` or an array of names")
    names = []
    for line in text.splitlines():
        name = line.split("#", 1)[0].strip()
        if name:
            names.append(name)
    return names
