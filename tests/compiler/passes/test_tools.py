"""Tool and skill resolution against a Host (a fake one, and the real one on tmp dirs)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from prosec.compiler.config import Config
from prosec.compiler.host import SystemHost, parse_registry
from prosec.compiler.passes import tools
from prosec.compiler.pipeline import compile_texts

from ..helpers import codes, node, project

TOOLS = node(
    "worker",
    extra="### Tools\n\n- `cli:jq`: json\n- `mcp:gmail`: mail\n\n### Skills\n\n- document-skills:pdf",
)


@dataclass
class FakeHost:
    executables: set[str] = field(default_factory=set)
    servers: dict[str, str] = field(default_factory=dict)
    skills: set[str] = field(default_factory=set)
    registries: tuple[str, ...] = ()

    def find_executable(self, name: str) -> bool:
        return name in self.executables

    def mcp_servers(self) -> Mapping[str, str]:
        return self.servers

    def mcp_registries(self) -> tuple[str, ...]:
        return self.registries

    def find_skill(self, namespace: str, name: str) -> str | None:
        return "./skills" if f"{namespace}:{name}" in self.skills else None

    def skill_search_path(self) -> tuple[str, ...]:
        return ("./skills", "~/.claude/skills")


def test_everything_resolved() -> None:
    host = FakeHost({"jq"}, {"gmail": "mcp.json"}, {"document-skills:pdf"}, ("mcp.json",))
    found, checks = tools.run(project(TOOLS), host)
    assert found == []
    assert [(c.kind, c.found) for c in checks] == [
        ("cli", "PATH"),
        ("mcp", "mcp.json"),
        ("skill", "./skills"),
    ]


def test_unresolved_tools_and_skills_are_the_upstream_codes() -> None:
    found, checks = tools.run(project(TOOLS), FakeHost())
    assert codes(found) == ["skill_unresolved", "tool_unresolved", "tool_unresolved"]
    assert any("no MCP registry is configured" in d.message for d in found)
    assert tools.repeat(FakeHost(), checks)
    assert not tools.repeat(FakeHost({"jq"}), checks)


def test_offline_tools_skips_the_lookups() -> None:
    texts = [TOOLS]
    online = compile_texts(texts, Config(), host=FakeHost())
    offline = compile_texts(texts, Config(offline_tools=True), host=FakeHost())
    assert "tool_unresolved" in codes(list(online.diagnostics))
    assert "tool_unresolved" not in codes(list(offline.diagnostics))


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (json.dumps({"mcpServers": {"gmail": {}, "slack": {}}}), ["gmail", "slack"]),
        (json.dumps({"servers": {"linear": {}}}), ["linear"]),
        (json.dumps(["a", "b"]), ["a", "b"]),
        ("# hosted servers\ngmail\n\nslack  # team\n", ["gmail", "slack"]),
    ],
)
def test_registry_formats(text: str, names: list[str]) -> None:
    assert parse_registry(text) == names


def test_system_host(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    tool = tmp_path / "bin" / "jq"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"gmail": {}}}))
    (tmp_path / "home" / ".claude" / "skills" / "document-skills" / "pdf").mkdir(parents=True)
    (tmp_path / "skills" / "flat").mkdir(parents=True)
    host = SystemHost(
        root=tmp_path,
        path_env=str(tmp_path / "bin"),
        home=tmp_path / "home",
        registries=("mcp.json", "missing.json"),
    )
    assert host.find_executable("jq") and not host.find_executable("gh")
    assert host.mcp_servers() == {"gmail": "mcp.json"}
    assert host.mcp_registries()[1].startswith("missing.json (unreadable")
    assert host.find_skill("document-skills", "pdf") == "~/.claude/skills"
    assert host.find_skill("", "flat") == "./skills"
    assert host.find_skill("x", "absent") is None
