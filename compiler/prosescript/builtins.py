"""The ProseScript builtins: the render's runtime primitives and pure helpers `name(args)` calls.

A `name(args)` call resolves, in order, to a binding in scope (a slot or delegate held in
a variable), a builtin below, a `call` target (a function, slot, `use` alias, delegate or
pattern instance: the arguments bind to its declared inputs in order), and otherwise to
an operation the render performs by judgement, like a discretion condition (reported as
`prosescript_render_operation`, an info).
"""

from __future__ import annotations

from typing import NamedTuple

from .scope import key


class Builtin(NamedTuple):
    name: str
    params: tuple[str, ...]  # as shown in messages; the last one may repeat when `variadic`
    required: int  # how many of `params` must be given
    variadic: bool
    statement: bool  # a statement may drop the parentheses (`write_world_model value`)
    summary: str

    def accepts(self, count: int) -> bool:
        return count >= self.required and (self.variadic or count <= len(self.params))

    def signature(self) -> str:
        shown = [p if i < self.required else f"[{p}]" for i, p in enumerate(self.params)]
        if self.variadic:
            shown.append("…")
        return f"{self.name}({', '.join(shown)})"


_TABLE = (
    Builtin(
        "input",
        ("name",),
        1,
        False,
        False,
        "the value of the contract's declared input `name` (as reading the name itself)",
    ),
    Builtin(
        "read_world_model",
        ("node",),
        1,
        False,
        False,
        'the last published truth of `node`, by reference; `"self"` is this node\'s prior '
        "world-model (null before its first commit)",
    ),
    Builtin(
        "read_subscription",
        ("producer", "facet"),
        1,
        False,
        False,
        "the value of a subscribed facet of `producer` (its whole truth without `facet`), "
        "at the version pinned by the wake",
    ),
    Builtin(
        "write_world_model",
        ("value",),
        1,
        False,
        True,
        "publish `value` as this node's new world-model (commit and sign); its result is null",
    ),
    Builtin(
        "max",
        ("value",),
        1,
        True,
        False,
        "the largest argument, or with one list argument its largest item (numbers by value, "
        "text by code point; null when empty)",
    ),
    Builtin(
        "min",
        ("value",),
        1,
        True,
        False,
        "the smallest argument, or with one list argument its smallest item",
    ),
)

BUILTINS: dict[str, Builtin] = {key(b.name): b for b in _TABLE}


def builtin(name: str) -> Builtin | None:
    """The builtin `name` spells (`-` and `_` alike), if any."""
    return BUILTINS.get(key(name))
