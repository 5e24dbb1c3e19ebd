"""What a contract puts in scope for its ProseScript: declared inputs and resolvable call targets."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from ..discover import source_stem as _stem
from ..ir import Contract, ContractKind, Item, Section
from ..values import value

if TYPE_CHECKING:  # the rule chain imports this package: no import back at run time
    from ..rules.context import RuleContext

PROSE_INFOS = frozenset({"prose", "prosescript"})
# sections whose declared names a render body may read
INPUT_SECTIONS = ("requires", "parameters", "maintains", "slots", "config")
# sections whose free `name: type` lines declare inputs (Maintains lines are clauses)
_LINE_DECLARING_SECTIONS = ("requires", "parameters", "slots", "config")
# `name: type -- description` lines written as indented text under a bullet
# ("- Pattern instance receives:" blocks) and `- `name` (type): …` bullets
_DECLARATION_LINE = re.compile(
    r"^\s*(?:[-*+]\s+)?`?([A-Za-z_][A-Za-z0-9_-]*)`?\s*(?:\([^)]*\))?\s*:"
)
_BACKTICKED = re.compile(r"`([A-Za-z_][A-Za-z0-9_-]*)`")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_SLOT_IO = re.compile(r"^\s*(requires|ensures)\s*:\s*(.*)$", re.IGNORECASE | re.DOTALL)


def key(name: str) -> str:
    """Names compare exactly, except that `-` and `_` spell the same name."""
    return name.replace("-", "_")


@value(kw_only=True)
class ContractScope:
    """Names readable by every fence of one contract, and the call targets it may name."""

    inputs: tuple[str, ...]  # declared names as written, sorted
    call_targets: frozenset[str]  # as written: contract names, slots, delegates …
    check_calls: bool  # False when the file's neighbours were not loaded (single-file lint)
    kind: str


def contract_scope(contract: Contract, context: RuleContext) -> ContractScope:
    inputs = set(_declared_inputs(contract, context.source.text.split("\n")))
    if contract.kind == ContractKind.PATTERN:
        inputs.add("config")
        inputs.update(_slot_io_names(contract))
    targets = set(_call_targets(contract, context))
    return ContractScope(
        inputs=tuple(sorted(inputs)),
        call_targets=frozenset(targets),
        check_calls=_neighbours_loaded(contract, context),
        kind=contract.kind,
    )


def _declared_inputs(contract: Contract, lines: list[str]) -> Iterator[str]:
    for section in contract.sections:
        if section.key not in INPUT_SECTIONS:
            continue
        yield from _item_names(section.body.items)
        for facet in section.facets:
            yield facet.name
            yield from _item_names(facet.body.items)
        for need in section.needs:
            if need.name:
                yield need.name
        if section.key in _LINE_DECLARING_SECTIONS:
            yield from _declaration_lines(section, lines)
            for paragraph in section.body.paragraphs:  # "the `topic` the caller passes"
                yield from _BACKTICKED.findall(paragraph.text)


def _item_names(items: Iterable[Item]) -> Iterator[str]:
    for item in items:
        if item.name:
            yield item.name
        yield from _item_names(item.children)


def _declaration_lines(section: Section, lines: list[str]) -> Iterator[str]:
    """`name:` at the start of a line anywhere in the section (outside code fences)."""
    fenced = {
        line
        for fence in section.body.fences
        for line in range(fence.span.line, fence.span.end_line + 1)
    }
    for number in range(section.heading_span.line + 1, section.span.end_line + 1):
        if number in fenced or number > len(lines):
            continue
        match = _DECLARATION_LINE.match(lines[number - 1])
        if match:
            yield match.group(1)


def _slot_io_names(contract: Contract) -> Iterator[str]:
    """A pattern's inputs are also what its slots `requires:` / `ensures:` (the instance
    passes them through), written as backticked names or comma-separated words."""
    section = contract.section("slots")
    if section is None:
        return
    for item in section.body.items:
        for child in item.children:
            match = _SLOT_IO.match(child.text)
            if match is None:
                continue
            listed = match.group(2)
            backticked = _BACKTICKED.findall(listed)
            if backticked:
                yield from backticked
                continue
            for chunk in listed.split(","):
                words = _WORD.findall(chunk)
                while words and words[0].lower() in ("optional", "the", "a", "an"):
                    words.pop(0)
                if words:
                    yield words[0]


def _call_targets(contract: Contract, context: RuleContext) -> Iterator[str]:
    source = context.source
    directory = source.path.rpartition("/")[0]
    for other in context.project.files:
        if other.dependency is not None and other is not source:
            continue  # a dependency's function is called through its `use` alias
        same_dir = other.path.rpartition("/")[0] == directory
        for node in other.contracts:
            if other is source or same_dir or not node.inline:
                yield node.name
            for instance in node.pattern_instances:
                if instance.name and (other is source or same_dir):
                    yield instance.name
        if same_dir:
            yield _stem(other.path)
    for section in contract.sections_named("slots"):
        yield from _item_names(section.body.items)
        yield from _declaration_lines(section, source.text.split("\n"))
    yield from _shape_delegates(contract)


def _shape_delegates(contract: Contract) -> Iterator[str]:
    for section in contract.sections_named("shape"):
        for item in section.body.items:
            if (item.name or "").lower() != "delegates":
                continue
            for child in item.children:
                if child.name:
                    yield child.name
            yield from _BACKTICKED.findall(item.description)


def _neighbours_loaded(contract: Contract, context: RuleContext) -> bool:
    """Same-directory files are call targets; when only this file was loaded (one file
    named on the command line), a target may live in a sibling that was never read."""
    directory = context.source.path.rpartition("/")[0]
    return sum(1 for f in context.project.files if f.path.rpartition("/")[0] == directory) > 1
