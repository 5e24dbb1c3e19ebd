"""Contract templates: a `# Title [param]` responsibility mounted once per facet it ranges over.

The template's *parameter need* names a facet spelled as the parameter (`the `runtime`
facet of `runtime-watch``) or a facet family whose prefix is the parameter (`the
`session:<id>` facet of `session-ledger``). It expands into one instance per facet the
producer emits (of that family), named `template[value]` and subscribed to exactly that
facet. When that cannot be decided (no such need, no single producer named, a producer
with no such facets) the template is mounted once under its own name, its parameter need
subscribes to `@atomic`, and a `template_unexpanded` warning says why.
"""

from __future__ import annotations

from dataclasses import replace

from ... import diagnostics as diag
from ...diagnostics import Diagnostic
from ...ir import Contract, Instance, Need
from ...values import value
from .index import ProducerIndex
from .text import analyze, family, is_family_pattern, key


@value
class Template:
    """A template contract, the need its parameter rides on, and what it expanded to."""

    contract: Contract
    parameter: str
    need: Need | None  # the parameter need (None: no need names the parameter)
    producer: str | None  # the producer the parameter ranges over, when one is named
    instances: tuple[Instance, ...]  # empty when expansion could not be decided

    @property
    def name(self) -> str:
        return self.contract.name


def instance_name(template: str, value: str) -> str:
    return f"{template}[{value}]"


def expand(index: ProducerIndex) -> tuple[list[Template], list[Contract], list[Diagnostic]]:
    """Every template of the index, the node contracts after expansion (instances renamed
    `template[value]`, undecided templates kept whole), and a warning per undecided one."""
    templates: list[Template] = []
    contracts: list[Contract] = []
    found: list[Diagnostic] = []
    for name, producer in sorted(index.producers.items()):
        contract = producer.contract
        parameter = contract.template_parameter
        if parameter is None:
            contracts.append(contract)
            continue
        template, problem = _expand(contract, parameter, index)
        templates.append(template)
        if template.instances:
            contracts.extend(
                replace(contract, name=instance_name(name, i.value)) for i in template.instances
            )
        else:
            contracts.append(contract)
            span = template.need.span if template.need is not None else contract.name_span
            found.append(
                diag.make(
                    "template_unexpanded",
                    f"`{name}` is a template over `{parameter}` (its title), but {problem}; it "
                    "is mounted once and its parameter need subscribes to `@atomic`",
                    span,
                )
            )
    return templates, contracts, found


def _expand(contract: Contract, parameter: str, index: ProducerIndex) -> tuple[Template, str]:
    for need in contract.needs:
        facet_text = _parameter_facet(need, parameter)
        if facet_text is None:
            continue
        producers = sorted(_producers(need, contract.name, index))
        if len(producers) != 1:
            problem = (
                f"its need names no producer of a `{facet_text}` facet"
                if not producers
                else "its need names several producers ("
                + ", ".join(f"`{p}`" for p in producers)
                + ")"
            )
            return Template(contract, parameter, need, None, ()), problem
        producer = producers[0]
        if index.producers[producer].contract.template_parameter is not None:
            return (
                Template(contract, parameter, need, producer, ()),
                f"its producer `{producer}` is itself a template",
            )
        facets = _facets(index, producer, facet_text)
        if not facets:
            return (
                Template(contract, parameter, need, producer, ()),
                f"`{producer}` emits no `{facet_text}` facet to range over",
            )
        instances = tuple(
            Instance(
                template=contract.name,
                parameter=parameter,
                value=value,
                producer=producer,
                facet=facet,
            )
            for facet, value in facets
        )
        return Template(contract, parameter, need, producer, instances), ""
    return (
        Template(contract, parameter, None, None, ()),
        f"no need names a `{parameter}` facet of a producer",
    )


def _parameter_facet(need: Need, parameter: str) -> str | None:
    """The facet text of `need` that spells the parameter (`runtime`, `session:<id>`)."""
    wanted = key(parameter)
    text = analyze(need.text, need.name)
    candidates = [t.text for t in text.facet_refs()] + list(text.facet_words())
    if need.name:
        candidates.insert(0, need.name)
    for candidate in candidates:
        if key(candidate) == wanted:
            return candidate
        if is_family_pattern(candidate) and family(candidate) == wanted:
            return candidate
    return None


def _producers(need: Need, subscriber: str, index: ProducerIndex) -> set[str]:
    """The nodes the parameter need names in backticks (its producer, qualified)."""
    text = analyze(need.text, need.name)
    found: set[str] = set()
    for token in text.code:
        if token.negated or text.followed_by_facet(token):
            continue
        node = index.reference(token.text.lstrip("#").strip())
        if node is not None and node != subscriber:
            found.add(node)
    return found


def _facets(index: ProducerIndex, producer: str, facet_text: str) -> list[tuple[str, str]]:
    """(facet, instance value) for each facet the parameter ranges over, in order."""
    facets = index.producers[producer].declared
    if is_family_pattern(facet_text):
        prefix = family(facet_text)
        return [(f, f.partition(":")[2]) for f in facets if family(f) == prefix]
    return [(f, f) for f in facets if family(f) is None]
