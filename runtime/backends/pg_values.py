"""What the PostgreSQL backend's tables hold: the frame of a `world_model_version` row
(its artifact, or the attachment file it names) and what JSONB refuses to store."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["attachment_frame", "jsonb_problem"]


def attachment_frame(row: Sequence[Any], runs: Path | None) -> bytes | None:
    """A world_model_version row's frame: its `artifact`, else the attachment file its
    `attachment_path` names under ROOT (None when neither can be read)."""
    artifact, attachment = row[0], row[1]
    if artifact is not None:
        return bytes(artifact)
    if attachment is None or runs is None:
        return None
    path = runs.parent / str(attachment)
    if not str(attachment).startswith("runs/") or ".." in Path(str(attachment)).parts:
        return None  # the database names a file outside the runs folder: not ours
    try:
        return path.read_bytes()
    except OSError:
        return None


def jsonb_problem(value: Any, path: str = "$") -> str | None:
    """Why PostgreSQL's JSONB would refuse `value` (a NUL character or a lone surrogate in
    a string or key, which the other backends store), or None."""
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            problem = _text_problem(item)
            if problem:
                return f"{where}: {problem}"
        elif isinstance(item, dict):
            for key, child in item.items():
                problem = _text_problem(str(key))
                if problem:
                    return f"{where}: a key has {problem}"
                stack.append((f"{where}.{key}", child))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", child) for i, child in enumerate(item))
    return None


_JSONB_REFUSES = re.compile("[\x00\ud800-\udfff]")


def _text_problem(text: str) -> str | None:
    found = _JSONB_REFUSES.search(text)
    if found is None:
        return None
    return "a NUL character (\\u0000)" if found.group() == "\x00" else "a lone surrogate"
