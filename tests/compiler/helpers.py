"""Small builders for in-memory OpenProse projects used by the compiler tests."""

from __future__ import annotations

import textwrap

from prosec.compiler.config import Config
from prosec.compiler.diagnostics import Diagnostic
from prosec.compiler.ir import Project, Topology
from prosec.compiler.lint import parse_texts
from prosec.compiler.passes import forme, patterns
from prosec.compiler.rules.identity import suggested_id


def node(
    name: str,
    *,
    kind: str = "responsibility",
    requires: str = "",
    maintains: str = "- `value`: the value",
    extra: str = "",
) -> tuple[str, str]:
    """One `.prose.md` file: frontmatter, optional Requires, Maintains and extra sections."""
    head = f"---\nname: {name}\nkind: {kind}\n"
    if kind == "responsibility":
        head += f"id: {suggested_id(name)}\n"
    parts = [head + "---\n"]
    if kind == "gateway":
        parts.append("### Continuity\n\n- external-driven\n")
    if requires:
        parts.append("### Requires\n\n" + textwrap.dedent(requires).strip() + "\n")
    if maintains:
        parts.append("### Maintains\n\n" + textwrap.dedent(maintains).strip() + "\n")
    if extra:
        parts.append(textwrap.dedent(extra).strip() + "\n")
    return f"src/{name}.prose.md", "\n".join(parts)


def project(*files: tuple[str, str]) -> Project:
    parsed, _ = parse_texts(list(files))
    expanded, _ = patterns.run(parsed)
    return expanded


def wire(
    *files: tuple[str, str], config: Config | None = None
) -> tuple[Topology, list[Diagnostic]]:
    return forme.run(project(*files), config or Config())


def edges(topology: Topology) -> set[tuple[str, str, str]]:
    """(producer, facet, subscriber) triples."""
    return {(e.producer, e.facet, e.subscriber) for e in topology.edges}


def codes(found: list[Diagnostic]) -> list[str]:
    return sorted(d.code for d in found)
