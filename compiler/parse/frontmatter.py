"""YAML frontmatter and fenced YAML blocks, loaded safely with line-accurate errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

try:  # the C loader is several times faster; fall back when libyaml is absent
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _Loader = yaml.SafeLoader


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
    loader = _Loader(content)
    try:
        node = loader.get_single_node()
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
