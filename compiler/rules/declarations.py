"""`### Tools` and `### Skills` declarations: their shapes (resolution happens at build)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..ir import Contract, Item, Span
from .context import RuleContext

SUPPORTED_TOOL_KINDS = ("cli", "mcp")
_NAMESPACE = re.compile(r"^([A-Za-z][\w.-]*):(.*)$")
_NONE = frozenset({"(none)", "none", "none."})


@dataclass(frozen=True, slots=True)
class Declaration:
    """One `### Tools` / `### Skills` entry as written: `namespace:name`."""

    raw: str
    namespace: str
    name: str
    span: Span


def declarations(contract: Contract, section_key: str) -> list[Declaration]:
    """The entries of a Tools/Skills section; `(none)` declares nothing."""
    result = []
    for section in contract.sections_named(section_key):
        for item in section.body.items:
            raw = _declared_text(item)
            if raw.lower() in _NONE:
                continue
            match = _NAMESPACE.match(raw)
            namespace, name = (match.group(1), match.group(2)) if match else ("", raw)
            result.append(Declaration(raw, namespace, name.strip(), item.name_span or item.span))
    return result


def _declared_text(item: Item) -> str:
    if item.name is not None and item.style.value.startswith("backtick"):
        return item.name.strip()
    if item.name is not None:  # `- cli:gh: desc` reads as name `cli` … rebuild it
        return item.text.split(maxsplit=1)[0].rstrip(":,")
    return item.text.split(maxsplit=1)[0].rstrip(":,") if item.text else ""


def check(contract: Contract, context: RuleContext) -> Iterator[Diagnostic]:
    for decl in declarations(contract, "tools"):
        if not decl.namespace or not _valid_name(decl.name):
            yield diag.make(
                "tool_invalid",
                f"tool declaration `{decl.raw}` must be `cli:<executable>` or `mcp:<server>` "
                "with a non-empty name and no path separators",
                decl.span,
            )
        elif decl.namespace not in SUPPORTED_TOOL_KINDS:
            yield diag.make(
                "tool_unsupported_kind",
                f"tool namespace `{decl.namespace}:` is reserved but unsupported; "
                "use `cli:` or `mcp:`",
                decl.span,
            )
    for decl in declarations(contract, "skills"):
        # flat `name` and namespaced `namespace:name` both resolve (<name>/ or <ns>/<name>/)
        if not _valid_name(decl.name) or (decl.namespace == "" and ":" in decl.raw):
            yield diag.make(
                "skill_invalid",
                f"skill declaration `{decl.raw}` must be `name` or `namespace:name` "
                "with no empty part, path separator or space",
                decl.span,
            )


def _valid_name(name: str) -> bool:
    return (
        bool(name) and "/" not in name and "\\" not in name and not any(c.isspace() for c in name)
    )
