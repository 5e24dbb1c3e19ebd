"""Resolve `### Tools` (`cli:` on PATH, `mcp:` in a registry) and `### Skills` on a Host."""

from __future__ import annotations

from dataclasses import dataclass

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..host import Host
from ..ir import Project
from ..rules.declarations import SUPPORTED_TOOL_KINDS, Declaration, declarations


@dataclass(frozen=True, slots=True, order=True)
class HostCheck:
    """One lookup and its outcome; a no-op rebuild repeats these to prove nothing moved."""

    kind: str  # "cli" | "mcp" | "skill"
    name: str
    found: str  # where it was found, or "" when unresolved


def run(project: Project, host: Host) -> tuple[list[Diagnostic], tuple[HostCheck, ...]]:
    """One diagnostic per unresolved declaration; malformed ones are lint's business."""
    found: list[Diagnostic] = []
    checks: dict[tuple[str, str], HostCheck] = {}
    for contract in project.contracts:
        for decl in declarations(contract, "tools"):
            if decl.namespace not in SUPPORTED_TOOL_KINDS or not _valid(decl.name):
                continue
            check = checks.setdefault((decl.namespace, decl.name), lookup(host, decl))
            if not check.found:
                found.append(_tool_unresolved(host, decl))
        for decl in declarations(contract, "skills"):
            if not _valid(decl.name) or (decl.namespace == "" and ":" in decl.raw):
                continue
            check = checks.setdefault(("skill", decl.raw), lookup(host, decl))
            if not check.found:
                searched = ", ".join(host.skill_search_path())
                found.append(
                    diag.make(
                        "skill_unresolved",
                        f"skill `{decl.raw}` is not installed; searched {searched} for "
                        f"`{decl.name}/`"
                        + (f" and `{decl.namespace}/{decl.name}/`" if decl.namespace else ""),
                        decl.span,
                    )
                )
    return found, tuple(sorted(checks.values()))


def lookup(host: Host, decl: Declaration) -> HostCheck:
    if decl.namespace == "cli":
        return HostCheck("cli", decl.name, "PATH" if host.find_executable(decl.name) else "")
    if decl.namespace == "mcp":
        return HostCheck("mcp", decl.name, host.mcp_servers().get(decl.name, ""))
    return HostCheck("skill", decl.raw, host.find_skill(decl.namespace, decl.name) or "")


def repeat(host: Host, checks: tuple[HostCheck, ...]) -> bool:
    """Whether every recorded lookup still has the same outcome."""
    for check in checks:
        if check.kind == "cli":
            now = "PATH" if host.find_executable(check.name) else ""
        elif check.kind == "mcp":
            now = host.mcp_servers().get(check.name, "")
        else:
            namespace, _, name = check.name.rpartition(":")
            now = host.find_skill(namespace, name) or ""
        if now != check.found:
            return False
    return True


def _tool_unresolved(host: Host, decl: Declaration) -> Diagnostic:
    if decl.namespace == "cli":
        message = f"tool `{decl.raw}`: no executable `{decl.name}` on PATH"
    elif host.mcp_registries():
        registries = ", ".join(host.mcp_registries())
        message = f"tool `{decl.raw}`: no MCP server `{decl.name}` in the registries ({registries})"
    else:
        message = (
            f"tool `{decl.raw}`: no MCP registry is configured; list registry files in "
            "prose.toml `[tools] mcp_registries` (or pass --offline-tools)"
        )
    return diag.make("tool_unresolved", message, decl.span)


def _valid(name: str) -> bool:
    return (
        bool(name) and "/" not in name and "\\" not in name and not any(c.isspace() for c in name)
    )
