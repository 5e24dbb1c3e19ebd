"""Pattern expansion: fenced `yaml` instances (`name`, `pattern`, `with`, `config`) → nodes.

An instance declared in a responsibility or gateway becomes a topology node named by the
instance; one declared in a function (or a test or pattern) is a called helper. Each slot
bound to a node becomes a need of the instance on that node, so Forme wires it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..ir import (
    NODE_KINDS,
    Body,
    Continuity,
    Contract,
    ContractKind,
    Need,
    PatternInstance,
    Project,
    Section,
    SourceFile,
    WakeSource,
)
from ..rules.identity import valid_name

_MAX_DEPTH = 8


@dataclass(frozen=True, slots=True)
class _Scope:
    patterns: Mapping[str, Contract]
    nodes: frozenset[str]
    taken: set[str]  # names in use, so an instance cannot shadow a contract
    files: Mapping[str, SourceFile]  # by path: where a dependency reference resolved


_REPORTED = object()  # a dependency reference that did not resolve: loading reported it


def run(project: Project) -> tuple[Project, list[Diagnostic]]:
    """Append one contract per pattern instance to the file that declares it."""
    scope = _Scope(
        patterns={
            c.name: c for c in project.contracts if c.kind == ContractKind.PATTERN and c.name
        },
        nodes=frozenset(c.name for c in project.contracts if c.kind in NODE_KINDS),
        taken={c.name for c in project.contracts},
        files={f.path: f for f in project.files},
    )
    found: list[Diagnostic] = []
    files = []
    for source in project.files:
        expanded: list[Contract] = []
        for host in source.contracts:
            if host.expanded_from is not None:
                continue
            for instance in host.pattern_instances:
                expanded.extend(_expand(source, host, instance, scope, found, 0))
        files.append(
            replace(source, contracts=(*source.contracts, *expanded)) if expanded else source
        )
    return replace(project, files=tuple(files)), found


def _expand(
    source: SourceFile,
    host: Contract,
    instance: PatternInstance,
    scope: _Scope,
    found: list[Diagnostic],
    depth: int,
) -> Iterator[Contract]:
    if not instance.name:
        found.append(diag.make("name_missing", "pattern instance has no `name:`", instance.span))
        return
    if not valid_name(instance.name):
        found.append(
            diag.make(
                "name_invalid",
                f"pattern instance name {instance.name!r} must be non-empty, not `.` or `..`, "
                "and contain no `/`, `\\` or whitespace",
                instance.span,
            )
        )
        return
    if instance.name in scope.taken:
        found.append(
            diag.make(
                "name_duplicate",
                f"pattern instance name `{instance.name}` is already used in this project",
                instance.span,
            )
        )
        return
    scope.taken.add(instance.name)
    looked_up = _lookup(instance.pattern, scope, source)
    pattern = looked_up if isinstance(looked_up, Contract) else None
    # a dependency that is not installed is reported once (dependency_missing); the
    # instance still becomes its node, so nothing downstream cascades from it
    if pattern is None and looked_up is not _REPORTED:
        known = ", ".join(f"`{name}`" for name in sorted(scope.patterns)) or "none"
        found.append(
            diag.make(
                "pattern_unknown",
                f"instance `{instance.name}` uses pattern `{instance.pattern}`, which names no "
                f"`kind: pattern` contract in this project (patterns: {known})",
                instance.span,
            )
        )
        return
    if pattern is not None:
        found.extend(_check(instance, pattern))
    node = host.kind in NODE_KINDS
    needs: list[Need] = []
    for slot, value in instance.bindings:
        for target, nested in _targets(instance, slot, value):
            if nested is not None and depth < _MAX_DEPTH:
                yield from _expand(source, host, nested, scope, found, depth + 1)
            if node and (target in scope.nodes or (nested is not None)):
                needs.append(
                    Need(
                        name=target,
                        text=f"`{target}` (bound to slot `{slot}` of pattern "
                        f"`{pattern.name if pattern else instance.pattern}`)",
                        span=instance.span,
                    )
                )
    yield _contract(host, instance, pattern, tuple(needs), node)


def _lookup(reference: str, scope: _Scope, source: SourceFile) -> Contract | object | None:
    """The pattern a reference names: for a dependency (`std/…`, `host/owner/repo/…`) the
    file it resolved to in deps/; else a project pattern by name (or last path segment)."""
    text = reference.strip()
    recorded = [i for i in source.imports if i.kind == "pattern" and i.text == text]
    if recorded:
        target = scope.files.get(recorded[0].target or "")
        if target is None:
            return _REPORTED
        return next(
            (
                c
                for c in target.contracts
                if not c.inline and c.kind == ContractKind.PATTERN and c.name
            ),
            None,
        )
    name = text.removesuffix(".prose.md").removesuffix(".md")
    return scope.patterns.get(name) or scope.patterns.get(name.rsplit("/", 1)[-1])


def _targets(
    instance: PatternInstance, slot: str, value: Any
) -> Iterator[tuple[str, PatternInstance | None]]:
    """The names a slot binds: a name, a list of names, or a nested pattern instance."""
    values = value if isinstance(value, tuple) else (value,)  # a YAML list, frozen
    for index, item in enumerate(values):
        if isinstance(item, Mapping) and "pattern" in item:
            suffix = f"-{index + 1}" if len(values) > 1 else ""
            name = str(item.get("name") or f"{instance.name}-{slot}{suffix}")
            raw_with, raw_config = item.get("with"), item.get("config")
            yield (
                name,
                PatternInstance(
                    name=name,
                    pattern=str(item.get("pattern") or ""),
                    bindings=tuple(
                        (str(k), v)
                        for k, v in (raw_with if isinstance(raw_with, Mapping) else {}).items()
                    ),
                    config=tuple(
                        (str(k), v)
                        for k, v in (raw_config if isinstance(raw_config, Mapping) else {}).items()
                    ),
                    span=instance.span,
                ),
            )
        elif isinstance(item, str | int | float) and str(item).strip():
            yield str(item).strip(), None


def _check(instance: PatternInstance, pattern: Contract) -> Iterator[Diagnostic]:
    slots = _declared(pattern, "slots")
    config = _declared(pattern, "config")
    bound = {slot for slot, _ in instance.bindings}
    for slot in sorted(bound - set(slots)):
        yield diag.make(
            "pattern_slot_unknown",
            f"instance `{instance.name}` binds slot `{slot}`, which pattern `{pattern.name}` "
            f"does not declare (slots: {_names(slots)})",
            instance.span,
        )
    for slot, optional in slots.items():
        if slot not in bound and not optional:
            yield diag.make(
                "pattern_slot_unbound",
                f"instance `{instance.name}` leaves slot `{slot}` of pattern `{pattern.name}` "
                f"unbound; bind it under `with:`",
                instance.span,
            )
    for setting, _ in instance.config:
        if setting not in config:
            yield diag.make(
                "pattern_config_unknown",
                f"instance `{instance.name}` sets `config.{setting}`, which pattern "
                f"`{pattern.name}` does not declare (config: {_names(config)})",
                instance.span,
            )


def _declared(pattern: Contract, section_key: str) -> dict[str, bool]:
    """Declared names of a `### Slots` / `### Config` section → whether optional."""
    declared: dict[str, bool] = {}
    for section in pattern.sections_named(section_key):
        for item in section.body.items:
            if item.name:
                declared.setdefault(item.name, "optional" in item.text.lower())
    return declared


def _names(declared: Mapping[str, bool]) -> str:
    return ", ".join(f"`{name}`" for name in declared) or "none"


def _contract(
    host: Contract,
    instance: PatternInstance,
    pattern: Contract | None,
    needs: tuple[Need, ...],
    node: bool,
) -> Contract:
    sections: list[Section] = []
    if needs:
        sections.append(
            Section(
                key="requires",
                title="Requires",
                value="",
                span=instance.span,
                heading_span=instance.span,
                needs=needs,
            )
        )
    returns = pattern and (pattern.section("maintains") or pattern.section("returns"))
    sections.append(
        Section(
            key="maintains",
            title="Maintains",
            value="",
            span=instance.span,
            heading_span=instance.span,
            body=returns.body if returns else Body(),
            facets=returns.facets if returns else (),
        )
    )
    return Contract(
        name=instance.name,
        kind=ContractKind.RESPONSIBILITY if node else ContractKind.FUNCTION,
        span=instance.span,
        name_span=instance.span,
        path=host.path,
        inline=True,
        parent=host.name,
        title=pattern.title if pattern else None,
        sections=tuple(sections),
        continuity=Continuity(wake_source=WakeSource.INPUT, span=instance.span),
        expanded_from=instance,
    )
