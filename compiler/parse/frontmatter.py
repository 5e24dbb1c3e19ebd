"""YAML frontmatter and fenced YAML blocks, loaded safely with line-accurate errors."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# `key: value` lines whose value YAML would certainly read as this same string or int;
# anything else (quotes, flow or block values, comments, booleans, dates, floats …)
# goes to PyYAML. Most frontmatter is only such lines, and importing PyYAML costs more
# than a whole `prosec lint FILE` may take.
_SIMPLE_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?:[ ]+([^\n]*?))?[ ]*")
_SIMPLE_STRING = re.compile(r"[A-Za-z_/][A-Za-z0-9_./@ -]*")
_SIMPLE_INT = re.compile(r"0|[1-9][0-9]*")
_SIMPLE_TOKEN = re.compile(r"[0-9][A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*")  # e.g. an `id:`
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null"})


@dataclass(frozen=True, slots=True)
class YamlResult:
    """A loaded YAML document, or the error that stopped it (1-based file line/column)."""

    value: Any
    key_lines: dict[str, tuple[int, int]]  # top-level mapping key → (line, column), 1-based
    error: str | None = None
    error_line: int = 0
    error_column: int = 0


@dataclass(frozen=True, slots=True)
class FrontmatterBlock:
    """Where the `---` block sits: content lines are [first_line, end_line), 1-based."""

    content: str
    first_line: int  # 1-based line of the first content line
    end_line: int  # 1-based line of the closing `---` (or last line if unterminated)
    closed: bool


def find_frontmatter(lines: list[str]) -> FrontmatterBlock | None:
    """Locate a frontmatter block: `---` on line 1 up to the next `---` or `...` line."""
    if not lines or lines[0].rstrip() != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return FrontmatterBlock("\n".join(lines[1:index]), 2, index + 1, True)
    return FrontmatterBlock("\n".join(lines[1:]), 2, len(lines), False)


def load_yaml(content: str, first_line: int) -> YamlResult:
    """Safely load one YAML document whose first line sits at `first_line` of the file."""
    simple = simple_mapping(content, first_line)
    if simple is not None:
        return simple
    return _load_with_pyyaml(content, first_line)


def simple_mapping(content: str, first_line: int) -> YamlResult | None:
    """The value of a flat `key: word` mapping without PyYAML, or None when unsure."""
    value: dict[str, Any] = {}
    key_lines: dict[str, tuple[int, int]] = {}
    for offset, line in enumerate(content.split("\n")):
        if not line.strip():
            continue
        match = _SIMPLE_LINE.fullmatch(line)
        if match is None:
            return None
        raw = match.group(2)
        if raw is None or raw.endswith(" ") or raw.lower() in _YAML_WORDS:
            return None
        if _SIMPLE_INT.fullmatch(raw):
            value[match.group(1)] = int(raw)
        elif (_SIMPLE_STRING.fullmatch(raw) and not raw.startswith("_")) or (
            _SIMPLE_TOKEN.fullmatch(raw) and raw[:2].lower() not in ("0x", "0b", "0o")
        ):
            value[match.group(1)] = raw
        else:
            return None
        key_lines.setdefault(match.group(1), (first_line + offset, 1))
    return YamlResult(value or None, key_lines)


def _load_with_pyyaml(content: str, first_line: int) -> YamlResult:
    import yaml  # lazily: see _SIMPLE_LINE
    from prosec.runtime.yamlsafe import too_large

    loader = _loader_class()(content)
    try:
        node = loader.get_single_node()
        refused = too_large(node) if node is not None else None
        if refused is not None:
            return YamlResult(None, {}, f"{refused} (line {first_line})", first_line, 1)
        value = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = first_line + (mark.line if mark else 0)
        column = (mark.column + 1) if mark else 1
        problem = exc.problem or exc.context or "invalid YAML"
        return YamlResult(None, {}, f"{problem} (line {line})", line, column)
    except yaml.YAMLError as exc:  # e.g. a reader error on control characters
        return YamlResult(None, {}, str(exc).splitlines()[0], first_line, 1)
    finally:
        loader.dispose()
    key_lines: dict[str, tuple[int, int]] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                mark = key_node.start_mark
                key_lines.setdefault(str(key_node.value), (first_line + mark.line, mark.column + 1))
    return YamlResult(value, key_lines)


def _loader_class() -> Any:
    from prosec.runtime.yamlsafe import loader_class

    return loader_class()
