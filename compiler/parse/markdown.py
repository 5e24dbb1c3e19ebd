"""markdown-it tokens → contracts, sections, facets, needs and items with spans."""

from __future__ import annotations

import functools
import re
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..frozen import freeze
from ..ir import (
    Clause,
    ClauseKind,
    Contract,
    Fence,
    Item,
    PatternInstance,
    SourceFile,
    Span,
    Text,
)
from . import items as item_shapes
from .builders import BodyBuilder, ContractBuilder, FacetBuilder, SectionBuilder, freeze_contract
from .frontmatter import find_frontmatter, load_yaml
from .lines import Lines


@functools.cache
def _markdown() -> MarkdownIt:
    # commonmark + tables; html kept so inline HTML stays text rather than structure.
    # The core `inline` rule is off: most inlines (paragraphs) are only read as source
    # text, so headings and list items are tokenized on demand by `inline_children`,
    # which saves about a third of markdown-it's time on a typical contract.
    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    md.core.ruler.disable(["inline", "text_join"])
    return md


def inline_children(inline: Token) -> list[Token]:
    """The inline tokens of an `inline` block token, tokenized on first use."""
    if not inline.children and inline.content and not inline.meta.get("prosec_inline"):
        md = _markdown()
        inline.children = md.inline.parse(inline.content, md, {}, [])
        inline.meta["prosec_inline"] = True
    return inline.children or []


class _Parser:
    """One pass over a file's block tokens; the builders are local to this parse."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.at = Lines(path, text)
        self.lines = self.at.lines
        self.diagnostics: list[Diagnostic] = []
        self.all_fences: list[Fence] = []
        self.frontmatter_error = False

    # -- entry -----------------------------------------------------------------------------

    def parse(self) -> SourceFile:
        block = find_frontmatter(self.lines)
        frontmatter: dict[str, Any] = {}
        fm_spans: dict[str, Span] = {}
        fm_span: Span | None = None
        body_text = self.text
        if block is None:
            self.diagnostics.append(
                diag.make(
                    "frontmatter_missing",
                    "file has no YAML frontmatter; start it with `---`, `name:` and `kind:`",
                    self.at.span(1, 1, 1, len(self.at.line_text(1)) + 1),
                )
            )
        else:
            fm_span = self.at.region_span(1, block.end_line)
            if not block.closed:
                self.diagnostics.append(
                    diag.make(
                        "frontmatter_unterminated",
                        "frontmatter opened with `---` on line 1 is never closed",
                        self.at.span(1, 1, 1, 4),
                    )
                )
            frontmatter, fm_spans = self._load_frontmatter(block.content, block.first_line)
            # blank the frontmatter lines so token line maps stay file-relative
            body_text = "\n" * block.end_line + "\n".join(self.lines[block.end_line :])
        return SourceFile(
            path=self.path,
            text=self.text,
            contracts=self._contracts(
                body_text, frontmatter, fm_spans, block.end_line if block is not None else 0
            ),
            has_frontmatter=block is not None,
            frontmatter_error=self.frontmatter_error,
            frontmatter_span=fm_span,
            fences=tuple(self.all_fences),
        )

    def _contracts(
        self,
        body_text: str,
        frontmatter: dict[str, Any],
        fm_spans: dict[str, Span],
        fm_end: int,
    ) -> tuple[Contract, ...]:
        """The file's contracts from its body (its first `fm_end` lines, the frontmatter,
        blanked); `chunks.Reparser` overrides this to reuse unchanged `##` chunks."""
        contracts = self._walk(_markdown().parse(body_text))
        return tuple(
            freeze_contract(self.at, c, i, frontmatter, fm_spans) for i, c in enumerate(contracts)
        )

    def _load_frontmatter(
        self, content: str, first_line: int
    ) -> tuple[dict[str, Any], dict[str, Span]]:
        result = load_yaml(content, first_line)
        if result.error is not None:
            line = result.error_line
            self.diagnostics.append(
                diag.make(
                    "frontmatter_invalid",
                    f"frontmatter is not valid YAML: {result.error}",
                    self.at.span(line, result.error_column, line, len(self.at.line_text(line)) + 1),
                )
            )
            self.frontmatter_error = True
            return {}, {}
        if result.value is None:
            return {}, {}
        if not isinstance(result.value, dict):
            self.diagnostics.append(
                diag.make(
                    "frontmatter_invalid",
                    f"frontmatter must be a YAML mapping of keys, not a {type(result.value).__name__}",
                    self.at.span(first_line, 1, first_line, len(self.at.line_text(first_line)) + 1),
                )
            )
            self.frontmatter_error = True
            return {}, {}
        spans = {
            key: self.at.span(line, col, line, len(self.at.line_text(line)) + 1)
            for key, (line, col) in result.key_lines.items()
        }
        return {str(k): v for k, v in result.value.items()}, spans

    # -- token walk ------------------------------------------------------------------------

    def _walk(self, tokens: list[Token]) -> list[ContractBuilder]:
        file_contract = ContractBuilder(start_line=1, name_span=self.at.span(1, 1, 1, 1))
        contracts = [file_contract]
        contract = file_contract
        section: SectionBuilder | None = None
        facet: FacetBuilder | None = None
        pseudo: ClauseKind | None = None  # `**Postconditions**:` makes the next list clauses
        index = 0
        while index < len(tokens):
            token = tokens[index]
            kind = token.type
            lead, pseudo = pseudo, None  # a bold pseudo-heading governs the next block only
            if kind == "heading_open":
                level = int(token.tag[1])
                inline = tokens[index + 1]
                heading = heading_text(inline)
                span = self.at.block_span(token.map)
                line = span.line
                if level == 2:
                    self._close(contract, section, facet, line - 1)
                    contract = ContractBuilder(start_line=line, name_span=span, inline_name=heading)
                    contracts.append(contract)
                    section, facet = None, None
                elif level == 3:
                    self._close(contract, section, facet, line - 1)
                    title, value = split_heading_value(heading)
                    section = SectionBuilder(
                        key=section_key(title), title=title, value=value, heading_span=span
                    )
                    contract.sections.append(section)
                    facet = None
                elif level == 4 and section is not None and section.key in _FACET_SECTIONS:
                    if facet is not None:
                        facet.end_line = line - 1
                    facet = FacetBuilder(name=heading.strip(), heading=heading, heading_span=span)
                    section.facets.append(facet)
                elif (
                    level == 1
                    and contract is file_contract
                    and not contract.sections
                    and contract.title is None
                ):
                    contract.title = heading
                else:
                    self._body(contract, section, facet).subheadings.append(
                        Text(text=heading, span=span)
                    )
                index += 3
                continue
            body = self._body(contract, section, facet)
            if kind == "paragraph_open":
                inline = tokens[index + 1]
                span = self.at.block_span(token.map)
                text = inline_text(inline)
                body.paragraphs.append(Text(text=text, span=span))
                pseudo_title = item_shapes.pseudo_heading(text)
                if pseudo_title is not None:
                    body.subheadings.append(Text(text=pseudo_title, span=span))
                    pseudo = item_shapes.clause_heading(pseudo_title)
                elif section is not None and section.key in item_shapes.CLAUSE_SECTIONS:
                    body.clauses.extend(item_shapes.sentence_clauses(text, span))
                index += 3
                continue
            if kind in ("bullet_list_open", "ordered_list_open"):
                if lead is None and section is not None and section.key == "postconditions":
                    lead = ClauseKind.POSTCONDITION  # a `### Postconditions` block lists them
                index = self._list(tokens, index, body, lead)
                continue
            if kind == "fence":
                fence = self._fence(token)
                body.fences.append(fence)
                if fence.info == "yaml":
                    contract.patterns.extend(self._pattern_instances(fence))
                index += 1
                continue
            if kind in ("blockquote_open", "table_open"):
                index = self._text_container(tokens, index, body)
                continue
            if kind in ("code_block", "html_block"):
                body.paragraphs.append(
                    Text(text=token.content.rstrip("\n"), span=self.at.block_span(token.map))
                )
            index += 1
        self._close(contract, section, facet, len(self.lines))
        return contracts

    @staticmethod
    def _body(
        contract: ContractBuilder, section: SectionBuilder | None, facet: FacetBuilder | None
    ) -> BodyBuilder:
        if facet is not None:
            return facet.body
        if section is not None:
            return section.body
        return contract.preamble

    @staticmethod
    def _close(
        contract: ContractBuilder,
        section: SectionBuilder | None,
        facet: FacetBuilder | None,
        end_line: int,
    ) -> None:
        if facet is not None:
            facet.end_line = end_line
        if section is not None:
            section.end_line = end_line
        contract.end_line = end_line

    def _list(
        self,
        tokens: list[Token],
        index: int,
        body: BodyBuilder,
        lead: ClauseKind | None = None,
    ) -> int:
        """Consume one list (from its open token); top-level items go to `body`.

        Under a bold pseudo-heading such as `**Postconditions**:` (`lead`), every bullet
        is a clause of that kind rather than a contract item."""
        items, index = self._list_items(tokens, index, body)
        for item in items:
            clause = item_shapes.bullet_clause(item)
            if clause is None and lead is not None:
                clause = Clause(
                    kind=lead, text=item_shapes.flatten(item), span=item.span, bullet=True
                )
            if clause is not None:
                body.clauses.append(clause)
            else:
                body.items.append(item)
        return index

    def _list_items(
        self, tokens: list[Token], index: int, body: BodyBuilder
    ) -> tuple[list[Item], int]:
        open_token = tokens[index]
        close_type = open_token.type.replace("_open", "_close")
        level = open_token.level
        index += 1
        result: list[Item] = []
        while index < len(tokens):
            token = tokens[index]
            if token.type == close_type and token.level == level:
                return result, index + 1
            if token.type == "list_item_open":
                item, index = self._list_item(tokens, index, body)
                if item is not None:
                    result.append(item)
                continue
            index += 1
        return result, index

    def _list_item(
        self, tokens: list[Token], index: int, body: BodyBuilder
    ) -> tuple[Item | None, int]:
        open_token = tokens[index]
        level = open_token.level
        span = self.at.block_span(open_token.map)
        index += 1
        first: Token | None = None
        extra: list[str] = []
        children: list[Item] = []
        while index < len(tokens):
            token = tokens[index]
            if token.type == "list_item_close" and token.level == level:
                index += 1
                break
            if token.type == "inline":
                if first is None:
                    first = token
                else:
                    extra.append(inline_text(token))
                index += 1
            elif token.type in ("bullet_list_open", "ordered_list_open"):
                nested, index = self._list_items(tokens, index, body)
                children.extend(nested)
            elif token.type == "fence":
                body.fences.append(self._fence(token))
                index += 1
            elif token.type == "code_block":
                extra.append(token.content.strip())
                index += 1
            else:
                index += 1
        if first is None:
            return None, index
        # only a leading code span needs inline tokens; other shapes read the source text
        lead_tokens = inline_children(first) if first.content.lstrip().startswith("`") else []
        shape = item_shapes.classify(first.content, lead_tokens)
        text = " ".join([inline_text(first), *extra]).strip()
        description = " ".join([shape.description, *extra]).strip()
        name_span = None
        if shape.name is not None:
            line = (first.map[0] + 1) if first.map else span.line
            name_span = self.at.find_in_line(line, shape.name, span.column)
        return (
            Item(
                name=shape.name,
                description=description,
                text=text,
                style=shape.style,
                span=span,
                name_span=name_span,
                children=tuple(children),
            ),
            index,
        )

    def _text_container(self, tokens: list[Token], index: int, body: BodyBuilder) -> int:
        """Blockquotes and tables are kept as prose: one Text with their inline content."""
        open_token = tokens[index]
        close_type = open_token.type.replace("_open", "_close")
        level = open_token.level
        parts: list[str] = []
        index += 1
        while index < len(tokens):
            token = tokens[index]
            if token.type == close_type and token.level == level:
                index += 1
                break
            if token.type == "inline":
                parts.append(inline_text(token))
            elif token.type == "fence":
                body.fences.append(self._fence(token))
            index += 1
        body.paragraphs.append(Text(text="\n".join(parts), span=self.at.block_span(open_token.map)))
        return index

    def _fence(self, token: Token) -> Fence:
        span = self.at.block_span(token.map)
        info = token.info.strip().split(maxsplit=1)[0].lower() if token.info.strip() else ""
        closed = self._fence_closed(token, span)
        if not closed:
            self.diagnostics.append(
                diag.make(
                    "fence_unterminated",
                    f"code fence opened with {token.markup} is never closed; "
                    "everything after it is swallowed as code",
                    self.at.span(
                        span.line, span.column, span.line, len(self.at.line_text(span.line)) + 1
                    ),
                )
            )
        fence = Fence(
            info=info,
            content=token.content,
            span=span,
            content_line=span.line + 1,
            closed=closed,
        )
        self.all_fences.append(fence)
        return fence

    def _fence_closed(self, token: Token, span: Span) -> bool:
        if span.end_line == span.line:
            return False
        last = self.at.line_text(span.end_line).lstrip(" >\t")
        marker = token.markup
        return last.startswith(marker) and not last.rstrip().strip(marker[0])

    def _pattern_instances(self, fence: Fence) -> list[PatternInstance]:
        result = load_yaml(fence.content, fence.content_line)
        if result.error is not None:
            line = result.error_line
            self.diagnostics.append(
                diag.make(
                    "yaml_invalid",
                    f"fenced yaml block is not valid YAML: {result.error}",
                    self.at.span(line, result.error_column, line, len(self.at.line_text(line)) + 1),
                )
            )
            return []
        entries = result.value if isinstance(result.value, list) else [result.value]
        instances = []
        for entry in entries:
            if not isinstance(entry, dict) or "pattern" not in entry:
                continue
            raw_with, raw_config = entry.get("with"), entry.get("config")
            bindings: dict[Any, Any] = raw_with if isinstance(raw_with, dict) else {}
            config: dict[Any, Any] = raw_config if isinstance(raw_config, dict) else {}
            instances.append(
                PatternInstance(
                    name=str(entry.get("name") or ""),
                    pattern=str(entry.get("pattern") or ""),
                    bindings=tuple((str(k), freeze(v)) for k, v in bindings.items()),
                    config=tuple((str(k), freeze(v)) for k, v in config.items()),
                    span=fence.span,
                )
            )
        return instances


def parse_source(path: str, text: str) -> tuple[SourceFile, list[Diagnostic]]:
    """Parse one `.prose.md` file's text; `path` is the root-relative display path.

    Line endings are normalized to `\\n` first (markdown-it counts a lone `\\r` as a line
    break), so every span is relative to `SourceFile.text`."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    parser = _Parser(path, text)
    source = parser.parse()
    return source, parser.diagnostics


# -- token helpers (pure) --------------------------------------------------------------------


def heading_text(inline: Token) -> str:
    """Plain text of a heading: code spans unwrapped, entities decoded by markdown-it."""
    if not _INLINE_MARKUP.search(inline.content):
        return " ".join(inline.content.split())
    parts = []
    for child in inline_children(inline):
        if child.type in ("text", "code_inline", "text_special", "html_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return " ".join("".join(parts).split())


_INLINE_MARKUP = re.compile(r"[`*_&<>\[\]!\\]")


def inline_text(inline: Token) -> str:
    """An inline's source text with line breaks folded to spaces (markup kept)."""
    return " ".join(inline.content.split())


def split_heading_value(heading: str) -> tuple[str, str]:
    """`Continuity: external-driven` → (`Continuity`, `external-driven`)."""
    for separator in (":", " — ", " - "):
        if separator in heading:
            title, _, value = heading.partition(separator)
            return title.strip(), value.strip()
    return heading.strip(), ""


def section_key(title: str) -> str:
    return " ".join(title.lower().split())


# `####` under these sections are facets (Maintains, and a separate `### Facets` block
# that authors write after it) or facet-needs (Requires)
_FACET_SECTIONS = frozenset({"maintains", "requires", "facets"})
