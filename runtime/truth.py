"""Artifact files → one structured truth value (the input of every canonicalizer).

Rules (DESIGN §6): a `.json` / `.yaml` / `.yml` file contributes its parsed value at the
key path given by its relative path without extension (a leading `published/` segment is
dropped, so `published/funding/events.json` lands at `funding.events`); a Markdown file
contributes its YAML frontmatter. Markdown bodies and other files are derived
projections, excluded whenever the artifact has structured content. An artifact with no
structured content at all is fingerprinted by its normalized text instead: each file's
text (CRLF → LF, trailing whitespace and trailing blank lines dropped) at its key path.

Every value is checked as it is read: no NaN or infinity (nor a number such as `1e400`
that overflows to one), no file value nested deeper than `MAX_DEPTH` (100) levels, no key
path deeper than `MAX_FOLDERS` (32) folders, and no YAML whose aliases expand past
`yamlsafe.MAX_NODES` values; a refused file is a TruthError naming it. So every truth
nests at most 132 levels, which every later step (canonicalizer, canonical JSON,
validator) can walk.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from .canonical import MAX_DEPTH, json_depth, loads_strict, normalize_path
from .canonicalizer import no_gc
from .yamlsafe import YamlRefused, load_guarded

__all__ = ["MAX_FOLDERS", "Truth", "TruthError", "build_truth", "normalize_text"]

_STRUCTURED = (".json", ".yaml", ".yml")
MAX_FOLDERS = 32
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
    """Build the structured truth of an artifact given as normalized path → bytes.

    The cyclic GC is paused meanwhile, and the fresh tree (a JSON tree holds no cycles)
    is then handed straight to the oldest generation: otherwise the first young
    collection after it would walk every container just built, only to promote it."""
    with no_gc():
        truth = _build(files)
        _promote_young()
    return truth


def _promote_young() -> None:
    # freeze + unfreeze moves every tracked object into the oldest generation without
    # visiting any; skipped when someone else froze objects (unfreeze would free theirs)
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


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
        if len(keys) > MAX_FOLDERS:
            raise TruthError(path, f"key path nested deeper than {MAX_FOLDERS} folders")
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


def _decode(path: str, content: bytes) -> str:
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TruthError(path, f"is not UTF-8 text (byte {exc.start})") from exc


def _parse_structured(path: str, content: bytes, suffix: str) -> Any:
    if suffix == ".json":
        try:
            return loads_strict(content)
        except ValueError as exc:  # not JSON or UTF-8; NaN, 1e400, too deep (located)
            raise TruthError(path, str(exc)) from exc
    return _load_yaml(path, _decode(path, content))


def _load_yaml(path: str, text: str, line_offset: int = 0) -> Any:
    try:
        value = load_guarded(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        # libyaml marks the end of input one line past the last: point at the last line
        line = min(mark.line, text.count("\n")) if mark is not None else 0
        where = f"line {line + 1 + line_offset}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise TruthError(path, f"{where}invalid YAML: {problem}") from exc
    except YamlRefused as exc:
        raise TruthError(path, str(exc)) from exc
    except ValueError as exc:  # a value no type can hold, e.g. an int of 5,000 digits
        raise TruthError(path, f"invalid YAML value: {exc}") from exc
    converted = _jsonable(path, value)
    if json_depth(converted) > MAX_DEPTH:  # guarded above; a merge key can still nest
        raise TruthError(path, f"YAML nested deeper than {MAX_DEPTH} levels")
    return converted


def _jsonable(path: str, value: Any) -> Any:
    # YAML can produce dates, sets and non-string keys; the truth must be plain JSON.
    # The guard bounded depth and size, so this recursion is bounded too.
    if isinstance(value, float) and not math.isfinite(value):
        raise TruthError(path, f"YAML value {value!r} is not a JSON number")
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(path, item) for item in value]
    if isinstance(value, dict):
        return {_key(path, key): _jsonable(path, item) for key, item in value.items()}
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise TruthError(path, f"YAML value of type {type(value).__name__} has no JSON form")


def _key(path: str, key: Any) -> str:
    if isinstance(key, float) and not math.isfinite(key):
        raise TruthError(path, f"YAML key {key!r} is not a JSON number")
    if key is None or isinstance(key, bool | int | float | str) or hasattr(key, "isoformat"):
        return str(key)
    raise TruthError(path, f"YAML key of type {type(key).__name__} has no JSON form")


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
