"""Artifact files → one structured truth value (the input of every canonicalizer).

Rules (DESIGN §6): a `.json` / `.yaml` / `.yml` file contributes its parsed value at the
key path given by its relative path without extension (a leading `published/` segment is
dropped, so `published/funding/events.json` lands at `funding.events`); a Markdown file
contributes its YAML frontmatter. Markdown bodies and other files are derived
projections, excluded whenever the artifact has structured content. An artifact with no
structured content at all is fingerprinted by its normalized text instead: each file's
text (CRLF → LF, trailing whitespace and trailing blank lines dropped) at its key path.

This module is the runtime's only user of PyYAML.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from .canonical import normalize_path
from .canonicalizer import no_gc

__all__ = ["Truth", "TruthError", "build_truth", "normalize_text"]

_STRUCTURED = (".json", ".yaml", ".yml")
_MARKDOWN = (".md", ".markdown")


class TruthError(ValueError):
    """An artifact whose files cannot form one structured truth (parse error, key clash)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


@dataclass(frozen=True, slots=True, kw_only=True)
class Truth:
    """The structured truth of an artifact and whether it came from structured files."""

    value: Any
    structured: bool


def build_truth(files: Mapping[str, bytes]) -> Truth:
    """Build the structured truth of an artifact given as normalized path → bytes."""
    with no_gc():
        return _build(files)


def _build(files: Mapping[str, bytes]) -> Truth:
    structured: dict[str, Any] = {}
    texts: dict[str, Any] = {}
    leaves: set[int] = set()  # ids of values that came from files (kept alive by the trees)
    has_structured = False
    for raw_path in sorted(files):
        path = normalize_path(raw_path)
        content = files[raw_path]
        stem, suffix = _split(path)
        keys = _key_path(stem)
        lowered = suffix.lower()
        if lowered in _STRUCTURED:
            value = _parse_structured(path, content, lowered)
            _place(structured, keys, value, path, leaves)
            has_structured = True
            continue
        text = _decode(path, content)
        if lowered in _MARKDOWN:
            front = _frontmatter(path, text)
            if front is not None:
                _place(structured, keys, front, path, leaves)
                has_structured = True
                continue
        _place(texts, keys, normalize_text(text), path, leaves)
    if has_structured:
        return Truth(value=structured, structured=True)
    return Truth(value=texts, structured=False)


def normalize_text(text: str) -> str:
    """CRLF/CR → LF, strip trailing whitespace per line, drop trailing blank lines."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).rstrip("\n")


def _split(path: str) -> tuple[str, str]:
    head, _, name = path.rpartition("/")
    dot = name.rfind(".")
    if dot <= 0:
        return path, ""
    stem = name[:dot]
    return (f"{head}/{stem}" if head else stem), name[dot:]


def _key_path(stem: str) -> list[str]:
    keys = stem.split("/")
    if len(keys) > 1 and keys[0] == "published":
        keys = keys[1:]
    return keys


def _refuse_constant(name: str) -> Any:
    # Python's json accepts NaN and Infinity; JSON (and every token) does not.
    raise ValueError(f"{name} is not a JSON number")


def _decode(path: str, content: bytes) -> str:
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TruthError(path, f"is not UTF-8 text (byte {exc.start})") from exc


def _parse_structured(path: str, content: bytes, suffix: str) -> Any:
    if suffix == ".json":
        try:
            return json.loads(content, parse_constant=_refuse_constant)
        except json.JSONDecodeError as exc:
            raise TruthError(path, f"line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
        except ValueError as exc:
            raise TruthError(path, str(exc)) from exc
        except UnicodeDecodeError as exc:
            raise TruthError(path, f"is not UTF-8 text (byte {exc.start})") from exc
    return _load_yaml(path, _decode(path, content))


def _load_yaml(path: str, text: str, line_offset: int = 0) -> Any:
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1 + line_offset}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise TruthError(path, f"{where}invalid YAML: {problem}") from exc
    return _jsonable(path, value)


def _jsonable(path: str, value: Any) -> Any:
    # YAML can produce dates, sets and non-string keys; the truth must be plain JSON.
    if isinstance(value, float) and not math.isfinite(value):
        raise TruthError(path, f"YAML value {value!r} is not a JSON number")
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(path, item) for item in value]
    if isinstance(value, dict):
        return {str(key): _jsonable(path, item) for key, item in value.items()}
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise TruthError(path, f"YAML value of type {type(value).__name__} has no JSON form")


def _frontmatter(path: str, text: str) -> Any | None:
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        return None
    lines = text.splitlines()
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            body = "\n".join(lines[1:index])
            value = _load_yaml(path, body, line_offset=1)
            return {} if value is None else value
    raise TruthError(path, "frontmatter opened with '---' is never closed")


def _place(root: dict[str, Any], keys: list[str], value: Any, path: str, leaves: set[int]) -> None:
    """Put `value` at `keys`; a value that came from a file is never merged into."""
    node = root
    for key in keys[:-1]:
        child = node.get(key)
        if child is None:
            child = node[key] = {}
        elif not isinstance(child, dict) or id(child) in leaves:
            raise TruthError(path, f"key path '{'.'.join(keys)}' clashes with another file")
        node = child
    if keys[-1] in node:
        raise TruthError(path, f"key path '{'.'.join(keys)}' is given by two files")
    node[keys[-1]] = value
    leaves.add(id(value))
