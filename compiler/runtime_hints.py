"""`### Runtime` → the runtime hints of a node: agent memory (`persist`) and `model`.

`### Shape` `delegates` (the runtime delegates a render may yield to, each a child item
or a backticked name) are lowered with them: a render may delegate only to these.

Lowered deterministically from the section's items (`` - `persist`: project ``,
`- model: opus — why`): the value is the first backticked word after the name, else its
first word. `persist` is `true` (memory for this run: `runs/{id}/agents/{name}/`),
`project` (`state/agents/{name}/`), `user` (the user root's `state/agents/{name}/`),
`false` (no memory) or a quoted path inside the project (the memory folder itself).
`model` is any short name the agent render understands. Anything else written for
those two keys is a `runtime_setting_invalid` warning and is not compiled; other
items are documentation.

The hints ride on the compiled intent's topology node as `runtime` (and enter the
contract fingerprint only when present, so a contract without hints keeps its
fingerprint):

    {"persist": "true" | "project" | "user" | "path", "path": "memory/captain", "model": "opus",
     "delegates": ["summarizer"]}
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from . import diagnostics as diag
from .diagnostics import Diagnostic
from .ir import Contract, Item
from .values import value

__all__ = ["PERSIST_SCOPES", "RuntimeHints", "check", "lower"]

PERSIST_SCOPES = ("true", "project", "user")
_OFF = ("false", "none", "no")
_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}")
_BACKTICKED = re.compile(r"`([^`]*)`")
_DELEGATE = re.compile(r"(?!\.\.?$)[A-Za-z0-9._-]{1,200}")


@value(kw_only=True)
class RuntimeHints:
    """A node's lowered `### Runtime`: memory scope (and folder for a path) and model."""

    persist: str | None = None  # "true" | "project" | "user" | "path"
    path: str | None = None  # for persist == "path": root-relative, forward-slashed
    model: str | None = None
    delegates: tuple[str, ...] = ()  # `### Shape` `delegates`, in source order

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {}
        if self.persist is not None:
            record["persist"] = self.persist
        if self.path is not None:
            record["path"] = self.path
        if self.model is not None:
            record["model"] = self.model
        if self.delegates:
            record["delegates"] = list(self.delegates)
        return record


def lower(contract: Contract) -> RuntimeHints | None:
    """The contract's runtime hints; None when it states none (or none that compile)."""
    hints, _ = _lower(contract)
    return hints


def check(contract: Contract) -> list[Diagnostic]:
    """`runtime_setting_invalid` for each `persist` / `model` value that does not compile."""
    _, found = _lower(contract)
    return found


def _lower(contract: Contract) -> tuple[RuntimeHints | None, list[Diagnostic]]:
    found: list[Diagnostic] = []
    persist: str | None = None
    path: str | None = None
    model: str | None = None
    for item in _items(contract):
        key = (item.name or "").strip().lower()
        if key == "persist":
            raw = _value_of(item)
            scope, where, problem = _persist(raw)
            if problem is not None:
                found.append(_invalid(item, f"`persist: {raw}` {problem}"))
            elif scope is not None:
                persist, path = scope, where
        elif key == "model":
            raw = _value_of(item)
            if _MODEL.fullmatch(raw):
                model = raw
            else:
                found.append(
                    _invalid(
                        item,
                        f"`model: {raw}` is not a model name (letters, digits and `._:/@+-`, "
                        "at most 200 characters); write e.g. `- model: opus`",
                    )
                )
    delegates = _delegates(contract, found)
    if persist is None and model is None and not delegates:
        return None, found
    return RuntimeHints(persist=persist, path=path, model=model, delegates=delegates), found


def _delegates(contract: Contract, found: list[Diagnostic]) -> tuple[str, ...]:
    names: list[str] = []
    for section in contract.sections_named("shape"):
        for item in section.body.items:
            if (item.name or "").strip().lower() != "delegates":
                continue
            written = [(child.name, child) for child in item.children if child.name]
            written += [(name, item) for name in _BACKTICKED.findall(item.description)]
            for name, where in written:
                name = name.strip()
                if not _DELEGATE.fullmatch(name):
                    found.append(
                        _invalid(
                            where,
                            f"delegate `{name}` is not a name a render can be bound to "
                            "(letters, digits, `._-`, no `/`)",
                        )
                    )
                elif name not in names:
                    names.append(name)
    return tuple(names)


def _items(contract: Contract) -> Iterator[Item]:
    for section in contract.sections_named("runtime"):
        yield from section.body.items


def _value_of(item: Item) -> str:
    """The value of `name: value — why`: its first backticked word, else its first word."""
    text = item.description.strip()
    match = _BACKTICKED.match(text)
    if match:
        return match.group(1).strip()
    word = text.split(maxsplit=1)[0] if text else ""
    return word.rstrip(".,;")


def _persist(raw: str) -> tuple[str | None, str | None, str | None]:
    """(scope, path, problem) of a `persist` value; (None, None, None) for `false`."""
    lowered = raw.lower()
    if lowered in PERSIST_SCOPES:
        return lowered, None, None
    if lowered in _OFF:
        return None, None, None
    quoted = len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'"
    candidate = raw[1:-1] if quoted else raw
    if "/" not in candidate and not quoted:
        return (
            None,
            None,
            "is not `true`, `project`, `user`, `false` or a quoted path inside the project",
        )
    parts = candidate.replace("\\", "/").split("/")
    if not candidate or candidate.startswith(("/", "~")) or re.match(r"[A-Za-z]:", candidate):
        return None, None, "must be a path inside the project, relative to its root"
    if ".." in parts:
        return None, None, "must not leave the project (`..`)"
    clean = "/".join(p for p in parts if p not in ("", "."))
    if not clean:
        return None, None, "must name a folder inside the project"
    return "path", clean, None


def _invalid(item: Item, message: str) -> Diagnostic:
    return diag.make("runtime_setting_invalid", message, item.span)
