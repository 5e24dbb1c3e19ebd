"""The typed intermediate representation: frozen, slotted, keyword-only dataclasses with spans.

Every node is a value: children are tuples and mappings `FrozenMap`s (YAML data frozen
deep), so nodes hash and compare by content."""

from __future__ import annotations

import re
from dataclasses import field
from enum import StrEnum
from typing import Any

# the runtime owns the wake-source vocabulary; re-exported for the passes and rules
from prosec.runtime.protocol import WakeSource as WakeSource

from .frozen import FrozenMap
from .values import value

ATOMIC_FACET = "@atomic"


class ContractKind(StrEnum):
    """A contract's `kind:`. A parsed contract holds the string as written (rules report a
    bad one, the compiled intent calls it `unknown`); a member equals its string."""

    RESPONSIBILITY = "responsibility"
    FUNCTION = "function"
    GATEWAY = "gateway"
    PATTERN = "pattern"
    TEST = "test"


KINDS = tuple(ContractKind)
RETIRED_KINDS = {"service": ContractKind.FUNCTION, "system": ContractKind.RESPONSIBILITY}
# the kinds that become topology nodes
NODE_KINDS = (ContractKind.RESPONSIBILITY, ContractKind.GATEWAY)

# `# Runtime Adapter [runtime]`: a `#` title ending in a bracketed parameter declares a
# contract template, mounted once per facet the parameter ranges over
_TITLE_PARAMETER = re.compile(r"^(?P<title>.*?\S)\s*\[(?P<parameter>[A-Za-z_][\w-]*)\]\s*$")
# ``The `orders_view` truth.`` opening the `### Maintains` lead names the whole truth
_NAMED_TRUTH = re.compile(r"^\s*the\s+`(?P<name>[A-Za-z_][\w:-]*)`\s+truth\b", re.IGNORECASE)


@value(kw_only=True)
class Span:
    """A 1-based, inclusive-start, exclusive-end-column region of one source file."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int

    def contains(self, other: Span) -> bool:
        return (self.line, self.column) <= (other.line, other.column) and (
            other.end_line,
            other.end_column,
        ) <= (self.end_line, self.end_column)


class ItemStyle(StrEnum):
    """How a list item was written; the parser keeps it so fixes can preserve style."""

    BACKTICK_COLON = "backtick-colon"  # - `name`: desc
    BACKTICK_DASH = "backtick-dash"  # - `name` — desc
    BACKTICK_ONLY = "backtick-only"  # - `name`
    BARE_COLON = "bare-colon"  # - name: desc
    SENTENCE = "sentence"  # - free text


class ClauseKind(StrEnum):
    """Keyword bullets and sentences inside a section that are not contract items."""

    IMMATERIAL = "immaterial"
    MATERIAL = "material"
    POSTCONDITION = "postcondition"
    FRESHNESS = "freshness"


@value(kw_only=True)
class Text:
    """A run of prose (paragraph, blockquote line, table, non-structural heading)."""

    text: str
    span: Span


@value(kw_only=True)
class Item:
    """One contract item: a bullet with an optional leading name and its description."""

    name: str | None
    description: str
    text: str  # the whole bullet's plain text
    style: ItemStyle
    span: Span
    name_span: Span | None = None
    children: tuple[Item, ...] = ()


@value(kw_only=True)
class Clause:
    """An `immaterial:` / `postcondition:` / `Material:` … statement (bullet or sentence)."""

    kind: ClauseKind
    text: str  # the clause body after its keyword
    span: Span
    qualifier: str = ""  # e.g. "everywhere" in `immaterial everywhere:`
    bullet: bool = True


@value(kw_only=True)
class Fence:
    """A fenced code block; `info` is the language tag, lowercased."""

    info: str
    content: str
    span: Span
    content_line: int  # 1-based line of the first content line
    closed: bool = True


@value(kw_only=True)
class Body:
    """The parsed content of a section or facet body, in source order per category."""

    paragraphs: tuple[Text, ...] = ()
    items: tuple[Item, ...] = ()
    clauses: tuple[Clause, ...] = ()
    fences: tuple[Fence, ...] = ()
    subheadings: tuple[Text, ...] = ()  # #### and deeper headings that are not facets

    @property
    def text(self) -> str:
        parts = [p.text for p in self.paragraphs] + [i.text for i in self.items]
        parts += [c.text for c in self.clauses]
        return "\n".join(parts)


@value(kw_only=True)
class Facet:
    """A `####` part under `### Maintains`: a named, independently subscribable truth."""

    name: str
    heading: str  # heading text as written (entities decoded)
    span: Span  # the whole facet (heading through body)
    heading_span: Span
    body: Body = field(default_factory=Body)


@value(kw_only=True)
class Need:
    """One `### Requires` need: a bullet, a free sentence, or a `####` facet-need."""

    name: str | None  # leading backticked/bare name or the facet-need heading
    text: str  # full text of the need (heading + body for a facet-need)
    span: Span
    name_span: Span | None = None
    facet_need: bool = False
    run_typed: str | None = None  # "run" | "run[]" for run-typed caller inputs


@value(kw_only=True)
class Section:
    """A `###` section: its canonical key, heading as written, and parsed body."""

    key: str  # lowercased, whitespace-collapsed title without the heading value
    title: str  # title as written (before any `:` value)
    value: str  # the value written in the heading (`### Continuity: external-driven`)
    span: Span
    heading_span: Span
    body: Body = field(default_factory=Body)
    facets: tuple[Facet, ...] = ()  # only under Maintains
    needs: tuple[Need, ...] = ()  # only under Requires


@value(kw_only=True)
class Continuity:
    """The lowered `### Continuity` wake-source declaration."""

    wake_source: WakeSource
    cadence: str | None = None  # normalized, e.g. "PT6H" or "P1D"
    cadence_text: str | None = None  # the phrase it was read from
    declared: bool = False  # False when defaulted because no section exists
    span: Span | None = None


@value(kw_only=True)
class PatternInstance:
    """A fenced `yaml` pattern instantiation (`name`, `pattern`, `with`, `config`)."""

    name: str
    pattern: str
    bindings: tuple[tuple[str, Any], ...] = ()  # `with:` slot → frozen value (str or nested)
    config: tuple[tuple[str, Any], ...] = ()  # frozen values
    span: Span


@value(kw_only=True)
class Contract:
    """One authored component: a file-level entry or an inline `##` node."""

    name: str
    kind: str  # "responsibility" | … | "unknown" (rules report bad kinds)
    span: Span  # whole contract region
    name_span: Span  # where the name is written (frontmatter key or `##` heading)
    path: str  # root-relative, forward-slashed source path
    inline: bool = False
    parent: str | None = None  # file-level contract name for inline nodes
    title: str | None = None  # `#` title text
    id: str | None = None
    subject: str | None = None
    version: str | None = None
    frontmatter: FrozenMap[str, Any] = field(default_factory=FrozenMap)  # the YAML block, frozen
    frontmatter_spans: FrozenMap[str, Span] = field(default_factory=FrozenMap)
    preamble: Body = field(default_factory=Body)  # text before the first `###`
    sections: tuple[Section, ...] = ()
    pattern_instances: tuple[PatternInstance, ...] = ()
    continuity: Continuity | None = None  # filled by the continuity pass
    expanded_from: PatternInstance | None = None  # set on nodes made by pattern expansion

    def section(self, key: str) -> Section | None:
        for section in self.sections:
            if section.key == key:
                return section
        return None

    def sections_named(self, key: str) -> tuple[Section, ...]:
        return tuple(s for s in self.sections if s.key == key)

    @property
    def facets(self) -> tuple[Facet, ...]:
        maintains = self.section("maintains")
        return maintains.facets if maintains else ()

    @property
    def needs(self) -> tuple[Need, ...]:
        return tuple(n for s in self.sections_named("requires") for n in s.needs)

    @property
    def template_parameter(self) -> str | None:
        """The parameter a responsibility's `# Title [param]` declares (a contract template)."""
        if self.kind != ContractKind.RESPONSIBILITY or self.inline or not self.title:
            return None
        match = _TITLE_PARAMETER.match(self.title)
        return match.group("parameter") if match else None

    @property
    def truth_name(self) -> str | None:
        """The name the `### Maintains` lead gives the whole truth (``The `x` truth.``),
        emitted as a facet; None when a `####` facet of that name already exists."""
        maintains = self.section("maintains")
        if maintains is None or not maintains.body.paragraphs:
            return None
        lead = maintains.body.paragraphs[0]
        if lead.span.line > min(
            (i.span.line for i in maintains.body.items), default=lead.span.line
        ):
            return None  # the lead is the first thing under the heading
        match = _NAMED_TRUTH.match(lead.text)
        if match is None:
            return None
        name = match.group("name")
        taken = {f.name.lower() for f in maintains.facets}
        return None if name.lower() in taken or name.startswith("@") else name


@value(kw_only=True)
class Import:
    """A reference to another file (`use "…"`, a `pattern:` of a pattern instance, a legacy
    `### Services` entry) and the file it resolved to on disk, if any."""

    kind: str  # "use" | "pattern" | "service"
    text: str  # as written, e.g. `std/evals/inspector` or `github.com/a/b/c@v1`
    span: Span
    target: str | None = None  # display path of the resolved file; None: unresolved


@value(kw_only=True)
class SourceFile:
    """One parsed `.prose.md` file: its text, contracts, and structural facts."""

    path: str  # root-relative, forward-slashed
    text: str
    contracts: tuple[Contract, ...]
    has_frontmatter: bool
    frontmatter_span: Span | None = None
    frontmatter_error: bool = False  # the block is not valid YAML or not a mapping
    fences: tuple[Fence, ...] = ()  # every fence in the file, in order
    # set by dependency loading (compiler/deps): `host/owner/repo/path.prose.md` for a file
    # read from deps/ (the project's rules do not check it), and what its references
    # resolved to
    dependency: str | None = None
    imports: tuple[Import, ...] = ()


@value(kw_only=True)
class Project:
    """Every parsed source of one compile or lint, in discovery (sorted path) order."""

    files: tuple[SourceFile, ...]

    @property
    def contracts(self) -> tuple[Contract, ...]:
        return tuple(c for f in self.files for c in f.contracts)

    def file(self, path: str) -> SourceFile | None:
        return next((f for f in self.files if f.path == path), None)


class Rung(StrEnum):
    """The Forme ladder rung that resolved a need (DESIGN.md section 5)."""

    PINNED = "pinned"
    QUALIFIED = "qualified"
    NAMED = "named"
    EMITS = "emits"
    MENTIONED = "mentioned"


@value(kw_only=True)
class Edge:
    """One resolved subscription: `subscriber.Requires.<need>` → `producer.Maintains.<facet>`."""

    subscriber: str
    producer: str
    facet: str
    rung: Rung
    evidence: str  # the text that decided it (pin, qualifier phrase, matched name …)
    need: Need | None = None  # None for edges drawn from a gateway's `### Emits`


@value(kw_only=True)
class Resolution:
    """What Forme decided for one need, including the undecided outcomes."""

    subscriber: str
    need: Need
    edges: tuple[Edge, ...] = ()
    # "wired" | "ambiguous" | "unsatisfied" | "self" (names its own node: feedback is
    # self continuity) | "caller" (a caller input: run-typed or supplied by the caller)
    status: str = "wired"
    candidates: tuple[str, ...] = ()  # `producer.facet` candidates or nearest producers
    rung: Rung | None = None  # the rung that decided (also for an ambiguous outcome)
    evidence: str = ""  # the text that decided it, or why nothing did


@value(kw_only=True)
class Instance:
    """One mount of a contract template: `template[value]`, subscribed to one facet."""

    template: str  # the template contract's name
    parameter: str  # the title parameter (`runtime`)
    value: str  # this mount's value (`claude`)
    producer: str  # the node whose facets the parameter ranges over
    facet: str  # the one facet of `producer` this mount subscribes to


@value(kw_only=True)
class TopologyNode:
    name: str
    contract: Contract  # for a template instance: the template, renamed to the instance
    wake_source: WakeSource
    cadence: str | None = None
    instance: Instance | None = None


@value(kw_only=True)
class Topology:
    """Forme's output: nodes, edges (sorted), entry points, acyclicity and every decision."""

    nodes: tuple[TopologyNode, ...]
    edges: tuple[Edge, ...]
    entry_points: tuple[str, ...]
    acyclic: bool
    resolutions: tuple[Resolution, ...] = ()
    cycle: tuple[str, ...] = ()  # node names along one cycle, first repeated at the end
