"""What a contract puts in scope for its ProseScript: declared inputs and resolvable call targets."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from ..discover import source_stem as _stem
from ..ir import Contract, ContractKind, Item, Project, Section, SourceFile
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
    index = _index(context.project)
    directory = _directory(context.source.path)
    shared = index.by_directory.get(directory, frozenset())
    extras = set(_own_targets(contract, context))
    return ContractScope(
        inputs=tuple(sorted(inputs)),
        # the directory's set itself when the contract adds nothing (most do not): one
        # object per directory, so the walker's keyed map of it is built once too
        call_targets=shared if extras <= shared else shared | extras,
        check_calls=index.files_per_directory.get(directory, 0) > 1,
        kind=contract.kind,
    )


def file_key(project: Project, source: SourceFile) -> tuple[frozenset[str], bool]:
    """All that `contract_scope` reads of the project beyond the file itself: the call
    targets of the file's directory and whether its neighbours were loaded."""
    index = _index(project)
    directory = _directory(source.path)
    return (
        index.by_directory.get(directory, frozenset()),
        index.files_per_directory.get(directory, 0) > 1,
    )


def _directory(path: str) -> str:
    return path.rpartition("/")[0]


@value(kw_only=True)
class _TargetIndex:
    """The call targets of one project by directory, built once per project: what any
    file of that directory may call (besides its own slots and delegates)."""

    by_directory: dict[str, frozenset[str]]
    files_per_directory: dict[str, int]


# the index of the project last checked, kept with the project it indexes: a lint or a
# build checks one project's contracts one after another
_LAST: list[tuple[Project, _TargetIndex]] = []


def _index(project: Project) -> _TargetIndex:
    last = _LAST[0] if _LAST else None
    if last is not None and last[0] is project:
        return last[1]
    everywhere: set[str] = set()  # non-inline contracts are callable from any directory
    local: dict[str, set[str]] = {}  # every contract, named instance and stem of a directory
    counts: dict[str, int] = {}
    for other in project.files:
        directory = _directory(other.path)
        counts[directory] = counts.get(directory, 0) + 1
        if other.dependency is not None:
            continue  # a dependency's function is called through its `use` alias
        names = local.setdefault(directory, set())
        names.update(_file_targets(other))
        everywhere.update(node.name for node in other.contracts if not node.inline)
    shared = frozenset(everywhere)
    by_directory = {directory: shared | names for directory, names in local.items()}
    # a directory holding only dependencies still sees every non-inline contract
    for directory in counts:
        by_directory.setdefault(directory, shared)
    index = _TargetIndex(by_directory=by_directory, files_per_directory=counts)
    _LAST[:] = [(project, index)]
    return index


def _file_targets(source: SourceFile) -> Iterator[str]:
    """What a file offers the files beside it: each contract, each named pattern
    instance, and the file's own stem."""
    for node in source.contracts:
        yield node.name
        for instance in node.pattern_instances:
            if instance.name:
                yield instance.name
    yield _stem(source.path)


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


def _own_targets(contract: Contract, context: RuleContext) -> Iterator[str]:
    """Targets only this contract may call: its slots and shape delegates, and, for a
    dependency's file (which its directory's index leaves out), the file's own names."""
    source = context.source
    if source.dependency is not None:
        yield from _file_targets(source)
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
