"""Code actions: the lint fixes (the ones `prosec lint --fix` applies), `### Tools` (none),
qualifiers and wiring pins."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..config import CONFIG_NAME
from ..diagnostics import Diagnostic
from ..fixes import qualifier
from ..ir import Contract, ContractKind, Need, SourceFile
from . import wiring
from .locate import contract_at
from .positions import LineIndex, Range
from .workspace import Analysis

QUICKFIX, REWRITE = "quickfix", "refactor.rewrite"
TOOLS_KINDS = (ContractKind.RESPONSIBILITY, ContractKind.FUNCTION)


@dataclass(frozen=True, slots=True)
class FileChange:
    """Edits to one file (created first when `create`); ranges are in client units."""

    path: Path
    edits: tuple[tuple[Range, str], ...]
    create: bool = False


@dataclass(frozen=True, slots=True)
class Action:
    title: str
    kind: str
    changes: tuple[FileChange, ...]
    diagnostic: Diagnostic | None = None
    preferred: bool = False


@dataclass(frozen=True, slots=True)
class Request:
    """Where the actions are asked for, plus what the pure functions may not fetch."""

    display: str
    start: tuple[int, int]  # 1-based line, code-point column
    end: tuple[int, int]
    encoding: str
    toml_text: str | None  # the project's prose.toml, None when it does not exist


def code_actions(analysis: Analysis, request: Request) -> list[Action]:
    source = analysis.source(request.display)
    if source is None:
        return []
    index = LineIndex(source.text, request.encoding)
    path = analysis.paths[request.display]
    actions: list[Action] = []
    handled: set[Need] = set()
    for found in analysis.diagnostics_for(request.display):
        if not _overlaps(found, request):
            continue
        # the fix `prosec lint --fix` applies, as it is (compiler/fixes.py applies it there)
        if found.fix is not None:
            edits = tuple((index.range(e.span), e.new_text) for e in found.fix.edits)
            actions.append(
                Action(found.fix.title, QUICKFIX, (FileChange(path, edits),), found, True)
            )
        need = _need_at(source, found)
        if need is not None and need not in handled:
            handled.add(need)
            actions.extend(_wiring_actions(analysis, request, index, need, found))
    actions.extend(_tools_action(source, request, index, path))
    return actions


def _overlaps(found: Diagnostic, request: Request) -> bool:
    span = found.span
    return (span.line, span.column) <= request.end and request.start <= (
        span.end_line,
        span.end_column,
    )


def _need_at(source: SourceFile, found: Diagnostic) -> Need | None:
    for contract in source.contracts:
        for need in contract.needs:
            if need.span == found.span or need.span.contains(found.span):
                return need
    return None


def _wiring_actions(
    analysis: Analysis, request: Request, index: LineIndex, need: Need, found: Diagnostic
) -> list[Action]:
    resolution = wiring.resolution(analysis.topology, need)
    if resolution is None or resolution.status not in ("ambiguous", "unsatisfied"):
        return []
    subscriber = analysis.node(resolution.subscriber)
    key = pin_key(need, subscriber.needs if subscriber is not None else (need,))
    path = analysis.paths[request.display]
    actions = []
    for candidate in resolution.candidates:
        producer, facet = wiring.split_candidate(analysis, candidate)
        target = f"`{producer}.{facet}`"
        if resolution.status == "ambiguous":
            edit = qualifier_edit(need, producer, facet, index)
            actions.append(
                Action(
                    f"Wire to {target} (name it in the need)",
                    QUICKFIX,
                    (FileChange(path, (edit,)),),
                    found,
                )
            )
        pin = Pin(resolution.subscriber, key, producer, facet)
        change = pin_change(analysis.root, request.toml_text, pin, request.encoding)
        if change is not None:
            title = f"Pin to {target} in {CONFIG_NAME}"
            actions.append(Action(title, QUICKFIX, (change,), found))
    return actions


def qualifier_edit(need: Need, producer: str, facet: str, index: LineIndex) -> tuple[Range, str]:
    """Name the producer in the need so the qualified rung decides: append
    `` (from `producer.facet`) `` to a bullet or sentence, or add a line under a `####`
    facet-need (whose heading is its name)."""
    reference = qualifier(producer, facet)
    line = need.span.line
    position = index.position(line, len(index.line(line)) + 1)
    if need.facet_need:
        return Range(position, position), f"\n\nFrom {reference}."
    return Range(position, position), f" (from {reference})"


@dataclass(frozen=True, slots=True)
class Pin:
    subscriber: str
    need: str
    producer: str
    facet: str


def pin_key(need: Need, needs: tuple[Need, ...]) -> str:
    """How a pin names a need: its leading name, else its 1-based position (`#N`)."""
    if need.name:
        return need.name
    position = next((i for i, n in enumerate(needs, start=1) if n == need), 1)
    return f"#{position}"


def pin_change(root: Path, toml_text: str | None, pin: Pin, encoding: str) -> FileChange | None:
    """Append a `[[wiring.pin]]` table to prose.toml (creating the file when absent); None
    when the result would not be valid TOML (e.g. `wiring.pin` written as an inline array)."""
    table = (
        "[[wiring.pin]]\n"
        f"subscriber = {_toml_string(pin.subscriber)}\n"
        f"need = {_toml_string(pin.need)}\n"
        f"producer = {_toml_string(pin.producer)}\n"
        f"facet = {_toml_string(pin.facet)}\n"
    )
    path = root / CONFIG_NAME
    if toml_text is None:
        start = LineIndex("", encoding).end()
        return FileChange(path, ((Range(start, start), table),), create=True)
    text = toml_text.replace("\r\n", "\n")
    if not text.strip() or text.endswith("\n\n"):
        lead = ""
    elif text.endswith("\n"):
        lead = "\n"
    else:
        lead = "\n\n"
    try:
        tomllib.loads(text + lead + table)
    except tomllib.TOMLDecodeError:
        return None
    end = LineIndex(text, encoding).end()
    return FileChange(path, ((Range(end, end), lead + table),))


def _toml_string(value: str) -> str:
    # a JSON string is a valid TOML basic string (same escapes, \uXXXX included)
    return json.dumps(value, ensure_ascii=False)


def _tools_action(
    source: SourceFile, request: Request, index: LineIndex, path: Path
) -> list[Action]:
    contract = contract_at(source, request.start[0])
    if contract is None or contract.kind not in TOOLS_KINDS or contract.section("tools"):
        return []
    return [_add_tools(contract, index, path)]


def _add_tools(contract: Contract, index: LineIndex, path: Path) -> Action:
    last = contract.span.end_line
    position = index.position(last, len(index.line(last)) + 1)
    edit = (Range(position, position), "\n\n### Tools\n\n(none)")
    return Action(
        f"Declare that `{contract.name}` needs no host tools (`### Tools` (none))",
        REWRITE,
        (FileChange(path, (edit,)),),
    )
