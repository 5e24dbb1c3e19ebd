"""The `tests` pass: a test plan for every `kind: test` contract, and its diagnostics.

Pure: the parsed project, Forme's topology and the canonicalizer specs in; `TestPlan`s
and diagnostics (values) out. A plan binds the subject's required inputs from
`### Fixtures`:

- a caller input of the subject: `` - `audience`: the city desk `` (text);
- a field or facet of a producer the subject requires: `` - `wire-feed.breaking`: [...] ``;
- a facet (or need name) that names one producer's output: `` - `breaking`: [...] ``;
- a producer's whole truth: `` - `front-page`: {"stories": [...]} `` (a JSON object).

Values are JSON when they parse, else text. Every producer the subject subscribes to
is replaced at run time by a node publishing its fixture, so the subject runs without
its upstream nodes; a required input no fixture binds is `test_fixture_missing`.
`### Changes` uses the same forms for a second run (selective-wake checks read it).
`### Expects` / `### Expects Not` items lower to checks (`test_checks`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..ir import ATOMIC_FACET, Contract, ContractKind, Item, Project, Span, Topology
from ..lowered import CanonicalizerSpec
from ..values import value

if TYPE_CHECKING:  # the checks' phrase table loads when a test contract is planned
    from .test_checks import Check

__all__ = ["TestPlan", "plan_test", "run"]

_ERROR_FILE = "__error.md"


@value(kw_only=True)
class TestPlan:
    """What one test runs: the subject, its fixtures (JSON text by producer), the caller
    inputs, the changes of a second run, and the lowered checks."""

    name: str
    path: str
    span: Span
    subject: str
    caller: tuple[tuple[str, str], ...] = ()
    fixtures: tuple[tuple[str, str], ...] = ()  # producer → canonical JSON of its truth
    changes: tuple[tuple[str, str], ...] | None = None
    changed_caller: tuple[tuple[str, str], ...] = ()
    checks: tuple[Check, ...] = ()
    function: bool = False  # the subject is a function: fixtures are its parameters

    def fixture_data(self) -> dict[str, Any]:
        return {producer: json.loads(text) for producer, text in self.fixtures}

    def changes_data(self) -> dict[str, Any] | None:
        if self.changes is None:
            return None
        return {producer: json.loads(text) for producer, text in self.changes}


def run(
    project: Project, topology: Topology | None, specs: Mapping[str, CanonicalizerSpec]
) -> tuple[tuple[TestPlan, ...], list[Diagnostic]]:
    """A plan for every test contract whose subject is a node of `topology`, and the
    diagnostics of every test contract (subject kind, fixtures, outputs)."""
    plans: list[TestPlan] = []
    found: list[Diagnostic] = []
    by_name = {c.name: c for c in project.contracts}
    for contract in project.contracts:
        if contract.kind != ContractKind.TEST or not contract.subject:
            continue
        plan, problems = plan_test(contract, by_name, topology, specs)
        found.extend(problems)
        if plan is not None:
            plans.append(plan)
    return tuple(plans), found


def literal(text: str) -> Any:  # `test_checks` compiles its phrases: loaded on first use
    from .test_checks import literal as read

    return read(text)


def lower_item(item: Item, index: int, *, negated: bool, nodes: Collection[str]) -> Check:
    from .test_checks import lower_item as lower

    return lower(item, index, negated=negated, nodes=nodes)


def subject_name(contract: Contract) -> str:
    assert contract.subject is not None
    return contract.subject.rsplit("/", 1)[-1].removesuffix(".prose.md")


def plan_test(
    test: Contract,
    contracts: Mapping[str, Contract],
    topology: Topology | None,
    specs: Mapping[str, CanonicalizerSpec],
) -> tuple[TestPlan | None, list[Diagnostic]]:
    """The plan of one test, or None when it cannot run (a diagnostic says why, unless
    the subject is outside this project or a function: `prosec test` says so itself)."""
    name = subject_name(test)
    subject = contracts.get(name)
    where = test.frontmatter_spans.get("subject", test.name_span)
    if subject is None:
        return None, []
    if subject.kind not in (ContractKind.RESPONSIBILITY, ContractKind.FUNCTION):
        return None, [
            diag.make(
                "test_subject_kind",
                f"test subject `{name}` is a {subject.kind}: a test runs a responsibility "
                "or a function (a pattern expands into nodes: test one of them)",
                where,
            )
        ]
    if subject.kind == ContractKind.FUNCTION:
        return _function_plan(test, subject), []
    if topology is None:
        return None, []
    node = next((n for n in topology.nodes if n.name == name), None)
    if node is None:
        return None, []
    return _Planner(test, subject, topology, specs).plan()


class _Planner:
    def __init__(
        self,
        test: Contract,
        subject: Contract,
        topology: Topology,
        specs: Mapping[str, CanonicalizerSpec],
    ) -> None:
        self.test = test
        self.subject = subject
        self.specs = specs
        self.edges = [e for e in topology.edges if e.subscriber == subject.name]
        self.producers = sorted({e.producer for e in self.edges})
        self.callers = [
            r.need.name or f"input-{position}"
            for position, r in enumerate(
                (r for r in topology.resolutions if r.subscriber == subject.name), start=1
            )
            if r.status == "caller"
        ]
        self.need_names: dict[str, set[str]] = {}
        for edge in self.edges:
            if edge.need is not None and edge.need.name:
                self.need_names.setdefault(edge.need.name, set()).add(edge.producer)
        self.found: list[Diagnostic] = []

    def plan(self) -> tuple[TestPlan, list[Diagnostic]]:
        fixtures, caller = self._bind(self._items("fixtures"), what="fixture")
        self._missing(fixtures, caller)
        changes: dict[str, dict[str, Any]] | None = None
        changed_caller: dict[str, str] = {}
        if self.test.section("changes") is not None:
            delta, changed_caller = self._bind(self._items("changes"), what="change")
            changes = {}
            for producer, data in delta.items():
                merged = dict(fixtures.get(producer, {}))
                merged.update(data)
                changes[producer] = merged
        checks = self._checks()
        plan = TestPlan(
            name=self.test.name,
            path=self.test.path,
            span=self.test.span,
            subject=self.subject.name,
            caller=tuple(sorted(caller.items())),
            fixtures=_frozen(fixtures),
            changes=None if changes is None else _frozen(changes),
            changed_caller=tuple(sorted(changed_caller.items())),
            checks=checks,
        )
        return plan, self.found

    def _items(self, key: str) -> Iterator[Item]:
        for section in self.test.sections_named(key):
            yield from section.body.items

    def _bind(
        self, items: Iterator[Item], *, what: str
    ) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
        fixtures: dict[str, dict[str, Any]] = {}
        caller: dict[str, str] = {}
        for item in items:
            name = item.name
            span = item.name_span or item.span
            if name is None:
                self._unknown(span, f"a {what} needs a leading `name`: {item.text!r}")
                continue
            text = item.description.strip()
            if name in self.callers:
                given = literal(text)
                caller[name] = given if isinstance(given, str) else json.dumps(given)
                continue
            producer, _, key = name.partition(".")
            if producer in self.producers and key:
                fixtures.setdefault(producer, {})[key] = literal(text)
                continue
            if name in self.producers:
                whole = literal(text)
                if not isinstance(whole, dict):
                    self._unknown(
                        span,
                        f"{what} `{name}` gives the whole truth of `{name}`: write it as a "
                        'JSON object ({"field": value, …}), or name one field as '
                        f"`{name}.field`",
                    )
                    continue
                fixtures.setdefault(name, {}).update(whole)
                continue
            owners = self._owners(name)
            if len(owners) == 1:
                fixtures.setdefault(owners[0], {})[name] = literal(text)
                continue
            if len(owners) > 1:
                listed = ", ".join(f"`{o}.{name}`" for o in owners)
                self._unknown(span, f"{what} `{name}` is ambiguous: write one of {listed}")
                continue
            known = [*self.callers, *self.producers]
            listed = ", ".join(f"`{k}`" for k in known) or "none"
            self._unknown(
                span,
                f"{what} `{name}` binds nothing `{self.subject.name}` requires (its caller "
                f"inputs and producers: {listed})",
            )
        return fixtures, caller

    def _owners(self, name: str) -> list[str]:
        owners = set(self.need_names.get(name, set()))
        for edge in self.edges:
            if edge.facet == name or name in self._paths(edge.producer, edge.facet):
                owners.add(edge.producer)
        return sorted(owners)

    def _paths(self, producer: str, facet: str) -> tuple[str, ...]:
        spec = self.specs.get(producer)
        if spec is None or facet == ATOMIC_FACET:
            return ()
        for entry in spec.facets:
            if entry.facet == facet:
                return entry.paths
        return (facet,)

    def _unknown(self, span: Span, message: str) -> None:
        self.found.append(diag.make("test_fixture_unknown", message, span))

    def _missing(
        self, fixtures: Mapping[str, Mapping[str, Any]], caller: Mapping[str, str]
    ) -> None:
        where = self.test.frontmatter_spans.get("subject", self.test.name_span)
        section = self.test.section("fixtures")
        if section is not None:
            where = section.heading_span
        for name in self.callers:
            if name not in caller:
                self.found.append(
                    diag.make(
                        "test_fixture_missing",
                        f"no fixture binds `{name}`, a caller input of `{self.subject.name}`"
                        f" (tests never prompt): add `{name}` to `### Fixtures`",
                        where,
                    )
                )
        for edge in self.edges:
            given = fixtures.get(edge.producer)
            if given is None:
                self.found.append(
                    diag.make(
                        "test_fixture_missing",
                        f"no fixture gives {_what(edge.producer, edge.facet)}, which "
                        f"`{self.subject.name}` requires (tests never prompt): add a "
                        f"`{edge.producer}.<field>` item to `### Fixtures`",
                        where,
                    )
                )
                continue
            paths = self._paths(edge.producer, edge.facet)
            roots = {p.split(".")[0] for p in paths}
            if roots and not any(_covers(root, key) for root in roots for key in given):
                self.found.append(
                    diag.make(
                        "test_fixture_missing",
                        f"the fixture of `{edge.producer}` has no `{sorted(roots)[0]}`, the "
                        f"facet `{edge.facet}` that `{self.subject.name}` requires",
                        where,
                    )
                )

    def _checks(self) -> tuple[Check, ...]:
        nodes = {self.subject.name, *self.producers}
        outputs = _outputs(self.subject)
        checks: list[Check] = []
        for key, negated in (("expects", False), ("expects not", True)):
            for item in self._items(key):
                check = lower_item(item, len(checks) + 1, negated=negated, nodes=nodes)
                checks.append(check)
                if check.op in ("rendered", "error_file", "judge") or not outputs:
                    continue
                root = check.target.split(".")[0]
                if root not in outputs:
                    listed = ", ".join(f"`{o}`" for o in sorted(outputs))
                    self.found.append(
                        diag.make(
                            "test_output_unknown",
                            f"`{check.target}` is no output `{self.subject.name}` maintains "
                            f"({listed})",
                            item.name_span or item.span,
                        )
                    )
        return tuple(checks)


def _function_plan(test: Contract, subject: Contract) -> TestPlan:
    """A function's test: every fixture is a parameter (the VM says which are missing or
    unknown when it runs), every assertion reads what the function returns."""
    caller: dict[str, str] = {}
    for section in test.sections_named("fixtures"):
        for item in section.body.items:
            if item.name:
                given = literal(item.description.strip())
                caller[item.name] = given if isinstance(given, str) else json.dumps(given)
    checks: list[Check] = []
    for key, negated in (("expects", False), ("expects not", True)):
        for section in test.sections_named(key):
            for item in section.body.items:
                checks.append(lower_item(item, len(checks) + 1, negated=negated, nodes=()))
    return TestPlan(
        name=test.name,
        path=test.path,
        span=test.span,
        subject=subject.name,
        caller=tuple(sorted(caller.items())),
        checks=tuple(checks),
        function=True,
    )


def _outputs(subject: Contract) -> set[str]:
    """The names a subject's `### Maintains` declares: its items and facets (and theirs)."""
    maintains = subject.section("maintains")
    if maintains is None:
        return set()
    names = {i.name for i in maintains.body.items if i.name}
    for facet in maintains.facets:
        names.add(facet.name)
        names.update(i.name for i in facet.body.items if i.name)
    return {n for n in names if n and n != _ERROR_FILE}


def _covers(root: str, key: str) -> bool:
    """A fixture key fills a facet's path: the same name, any key for `**`, and for a
    family (`level:<station>`) any key of that family (`level:mill`)."""
    if root in ("*", "**") or root == key:
        return True
    family, bracket, _ = root.partition("<")
    return bool(bracket) and key.startswith(family) and len(key) > len(family)


def _what(producer: str, facet: str) -> str:
    if facet == ATOMIC_FACET:
        return f"`{producer}`'s truth"
    return f"`{producer}.{facet}`"


def _frozen(data: Mapping[str, Mapping[str, Any]]) -> tuple[tuple[str, str], ...]:
    return tuple(
        (producer, json.dumps(truth, sort_keys=True, ensure_ascii=False))
        for producer, truth in sorted(data.items())
    )
