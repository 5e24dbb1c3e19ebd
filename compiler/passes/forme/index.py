"""Forme's lookup tables over the project's nodes: names, facets, items, titles, emits."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from typing import Any

from ... import diagnostics as diag
from ...diagnostics import Diagnostic
from ...ir import ATOMIC_FACET, NODE_KINDS, Contract, Instance, Item, Project, Span
from ...values import value
from .text import MAX_FORM_WORDS, STOPWORDS, WordIndex, family, is_family_pattern, key, words

_TITLE_TAIL = re.compile(r"\s*(?:\(|\[|—|–| - ).*$")
_CAMEL_NAME = re.compile(r"^[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+$")


@value
class Producer:
    """A topology node seen as a producer: its facets in declaration order (the truth
    named in its Maintains lead last)."""

    name: str
    contract: Contract
    facets: tuple[str, ...]
    instance: Instance | None = None  # set on a mount of a contract template

    @property
    def declared(self) -> tuple[str, ...]:
        """The `####` facets alone (without the named truth)."""
        truth = self.contract.truth_name
        return tuple(f for f in self.facets if f != truth)

    def emits(self, facet: str) -> bool:
        return facet == ATOMIC_FACET or facet in self.facets

    def facet_named(self, text: str) -> tuple[str, ...]:
        """This producer's facets that `text` names: exactly, by key, or as a family."""
        text = text.strip().lstrip("#").strip()
        if text in self.facets or text == ATOMIC_FACET:
            return (text,)
        wanted = key(text)
        exact = tuple(f for f in self.facets if key(f) == wanted)
        if exact:
            return exact
        prefix = family(text) if is_family_pattern(text) else wanted
        return tuple(f for f in self.facets if family(f) == prefix)


@value
class EmitsEntry:
    """One `### Emits` line of a gateway that names a node it wakes."""

    gateway: str
    subscriber: str
    evidence: str
    span: Span


class Table(dict[Any, Any]):
    """A lookup table of the index that notes each key looked up while `trace` is a list
    (incremental wiring: what one need's resolution read, see `forme.incremental`)."""

    __slots__ = ("label", "trace")

    def __init__(self, label: str, items: Mapping[Any, Any], trace: list[str] | None) -> None:
        super().__init__(items)
        self.label = label
        self.trace = trace

    def get(self, wanted: Any, default: Any = None) -> Any:
        if self.trace is not None:
            self.trace.append(trace_key(self.label, wanted))
        return super().get(wanted, default)

    def __getitem__(self, wanted: Any) -> Any:
        if self.trace is not None:
            self.trace.append(trace_key(self.label, wanted))
        return super().__getitem__(wanted)


def trace_key(label: str, wanted: Any) -> str:
    """One looked-up key as text: `table:key` (word tuples joined by spaces)."""
    text = " ".join(wanted) if isinstance(wanted, tuple) else str(wanted)
    return f"{label}:{text}"


class ProducerIndex:
    """Every lookup the ladder needs, built once per project (after template expansion,
    `instances` maps each mount's name to what it mounts).

    With `traced`, `contributions` holds the table keys each node put in the index, and
    the ladder's lookups are noted in `trace` while it is a list (set it per need)."""

    def __init__(
        self,
        nodes: list[Contract],
        instances: Mapping[str, Instance] | None = None,
        traced: bool = False,
    ) -> None:
        instances = instances or {}
        self.trace: list[str] | None = None
        self.contributions: dict[str, set[str]] | None = {} if traced else None
        producers: dict[str, Producer] = {}
        for contract in nodes:
            if contract.name and contract.name not in producers:
                declared = [f.name for f in contract.facets if f.name]
                if contract.truth_name:
                    declared.append(contract.truth_name)
                facets = tuple(dict.fromkeys(declared))
                instance = instances.get(contract.name)
                producers[contract.name] = Producer(contract.name, contract, facets, instance)
        self.producers: dict[str, Producer] = producers
        self.by_lower: dict[str, str] = {name.lower(): name for name in producers}
        self.name_keys: dict[str, set[str]] = defaultdict(set)
        # a template's name stands for all its mounts; `adapter-claude` for one of them
        self.templates: dict[str, tuple[str, ...]] = {}
        for name, instance in sorted(instances.items()):
            if name not in producers:
                continue
            template = instance.template
            self.templates[template] = (*self.templates.get(template, ()), name)
            for alias in instance_aliases(instance):
                self.by_lower.setdefault(alias.lower(), name)
                self.name_keys[key(alias)].add(name)
        for template, mounts in self.templates.items():
            self.name_keys[key(template)].update(mounts)
        self.facet_keys: dict[str, set[tuple[str, str]]] = defaultdict(set)
        self.families: dict[str, set[tuple[str, str]]] = defaultdict(set)
        self.item_keys: dict[str, set[str]] = defaultdict(set)
        self.titles: dict[tuple[str, ...], set[str]] = defaultdict(set)
        self.postings: dict[str, set[str]] = defaultdict(set)
        forms: list[tuple[str, tuple[str, ...]]] = []
        for name, producer in producers.items():
            self._add(name, producer, forms)
        if self.contributions is not None:
            self._contributed(forms)
            self._traced()
        self.words = WordIndex(forms, self if traced else None)

    def _traced(self) -> None:
        """Swap each table for one that notes the keys looked up (`trace`)."""
        for label in ("producers", "by_lower", "name_keys", "facet_keys", "families"):
            setattr(self, label, Table(label, getattr(self, label), None))
        for label in ("item_keys", "titles", "postings"):
            setattr(self, label, Table(label, getattr(self, label), None))

    def start_trace(self) -> list[str]:
        """Begin noting lookups in a fresh list (returned); `stop_trace` ends it."""
        trace: list[str] = []
        self._set_trace(trace)
        return trace

    def stop_trace(self) -> None:
        self._set_trace(None)

    def _set_trace(self, trace: list[str] | None) -> None:
        self.trace = trace
        for table in vars(self).values():
            if isinstance(table, Table):
                table.trace = trace
        for table in (self.words.forms, self.words.longest):
            if isinstance(table, Table):
                table.trace = trace

    def _contributed(self, forms: list[tuple[str, tuple[str, ...]]]) -> None:
        """The keys each node put in the index: a change to the node changes only the
        lookups of these keys (its old and its new keys)."""
        assert self.contributions is not None
        for name in self.producers:
            keys = self.contributions.setdefault(name, set())
            keys.update((trace_key("producers", name), trace_key("by_lower", name.lower())))
        contributions = self.contributions
        for table_name in ("name_keys", "item_keys", "titles", "postings"):
            table: dict[Any, set[str]] = getattr(self, table_name)
            for wanted, names in table.items():
                looked_up = trace_key(table_name, wanted)  # once per key, not per node
                for name in names:
                    contributions[name].add(looked_up)
        for table_name in ("facet_keys", "families"):
            pairs: dict[str, set[tuple[str, str]]] = getattr(self, table_name)
            for wanted, found in pairs.items():
                looked_up = trace_key(table_name, wanted)
                for name, _ in found:
                    contributions[name].add(looked_up)
        for name, form in forms:
            if form and len(form) <= MAX_FORM_WORDS:
                self.contributions[name].update(
                    (trace_key("forms", form), trace_key("longest", form[0]))
                )

    def _add(self, name: str, producer: Producer, forms: list[tuple[str, tuple[str, ...]]]) -> None:
        contract = producer.contract
        self.name_keys[key(name)].add(name)
        name_words = words(name)
        vocabulary = set(name_words)
        forms.append((name, name_words))
        for facet in producer.facets:
            self.facet_keys[key(facet)].add((name, facet))
            prefix = family(facet)
            if prefix:
                self.families[prefix].add((name, facet))
            vocabulary.update(words(facet))
        maintains = contract.section("maintains")
        for item in maintains.body.items if maintains else ():
            if item.name:
                self.item_keys[key(item.name)].add(name)
                vocabulary.update(words(item.name))
        if contract.title:
            for title in {contract.title, _TITLE_TAIL.sub("", contract.title)}:
                title_words = words(title)
                if title_words:
                    self.titles[title_words].add(name)
                    forms.append((name, title_words))
                    vocabulary.update(title_words)
        for word in vocabulary:
            if len(word) > 2 and word not in STOPWORDS:
                self.postings[word].add(name)

    def node(self, text: str) -> str | None:
        """The node a backticked token names exactly (case-insensitively)."""
        return self.by_lower.get(text.strip().lower())

    def template(self, text: str) -> tuple[str, ...]:
        """The mounts of the template a backticked token names (empty: no template)."""
        wanted = text.strip().lower()
        for name, mounts in self.templates.items():
            if name.lower() == wanted:
                return mounts
        return ()

    def reference(self, text: str) -> str | None:
        """The node a backticked token names: its name, or its world-model name
        written in CamelCase (`AlertState` for `alert-state`)."""
        node = self.node(text)
        if node is None and _CAMEL_NAME.match(text.strip()):
            hits = self.name_keys.get(key(text), set())
            if len(hits) == 1:
                node = next(iter(hits))
        return node

    def closest(self, text: str, exclude: str, limit: int = 3) -> tuple[str, ...]:
        """Nearest producers by shared words (a "did you mean" list), best first."""
        scores: Counter[str] = Counter()
        for word in set(words(text)):
            if len(word) > 2 and word not in STOPWORDS:
                for name in self.postings.get(word, ()):
                    if name != exclude:
                        scores[name] += 1
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        return tuple(name for name, _ in ranked[:limit])


def node_contracts(project: Project) -> list[Contract]:
    """Responsibilities and gateways (expanded pattern instances included), by name."""
    return sorted(
        (c for c in project.contracts if c.kind in NODE_KINDS and c.name),
        key=lambda c: (c.name, c.path, c.span.line),
    )


def emits_entries(index: ProducerIndex) -> tuple[list[EmitsEntry], list[Diagnostic]]:
    """Every `### Emits` line that names a node; lines naming no node warn."""
    entries: list[EmitsEntry] = []
    found: list[Diagnostic] = []
    for name, producer in sorted(index.producers.items()):
        for section in producer.contract.sections_named("emits"):
            for target, evidence, span in _emits_targets(section.body.items):
                head = target.split(".", 1)[0]
                node = index.node(head)
                mounts = index.template(head) if node is None else ()
                if mounts:  # a template: every mount is woken
                    entries.extend(EmitsEntry(name, m, evidence, span) for m in mounts)
                elif node is None:
                    found.append(
                        diag.make(
                            "emits_unknown",
                            f"`### Emits` of `{name}` names `{target}`, which is no node in "
                            "this project; name a responsibility to wake",
                            span,
                        )
                    )
                elif node != name:
                    entries.append(EmitsEntry(name, node, evidence, span))
    return entries, found


def _emits_targets(items: tuple[Item, ...]) -> Iterator[tuple[str, str, Span]]:
    """Named items and one-word bullets are targets; sentences are commentary."""
    for item in items:
        target = item.name or item.text.strip().strip("`")
        target = target.strip().strip("`").rstrip(".,;:")
        if target and " " not in target:
            yield target, f"### Emits: {item.text}", item.span


def instance_aliases(instance: Instance) -> Iterator[str]:
    """Other names a need may give a mount: `template-value`, and the template's last word
    with the value (`adapter-claude` for `runtime-adapter[claude]`)."""
    yield f"{instance.template}-{instance.value}"
    parts = instance.template.split("-")
    if len(parts) > 1:
        yield f"{parts[-1]}-{instance.value}"


@value
class Broken:
    """A source that failed to parse: the names a need may give it, and why it failed."""

    name: str
    path: str
    reason: str


_FRONTMATTER_NAME = re.compile(r"^name:\s*[\"']?([^\s\"'#]+)", re.MULTILINE)


def broken_sources(project: Project) -> dict[str, Broken]:
    """key(name) → the source that would define it but whose frontmatter failed to parse
    (missing or not valid YAML): the name in its raw frontmatter, its title or file stem."""
    found: dict[str, Broken] = {}
    for source in project.files:
        if source.has_frontmatter and not source.frontmatter_error:
            continue
        reason = (
            "its frontmatter is not valid YAML"
            if source.has_frontmatter
            else ("it has no frontmatter")
        )
        head = source.text.split("\n---", 1)[0] if source.has_frontmatter else ""
        names = [m.group(1) for m in _FRONTMATTER_NAME.finditer(head)]
        names += [c.name for c in source.contracts if not c.inline and c.name]
        for name in names:
            found.setdefault(key(name), Broken(name, source.path, reason))
    return found
