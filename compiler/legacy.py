"""Legacy standalone `.prose` programs (seed 000) as Contract Markdown `.prose.md`.

A legacy program is one ProseScript file: top-level `input name: "description"`
declarations, statements, and `output name = expression` results. Its Contract Markdown
form (what `prosec upgrade` writes and what `prosec run` compiles in memory) is one
`kind: function`: frontmatter `name` (the file's stem) and `kind`; the leading comment
block as the `#` title and description; each `input` a `### Parameters` entry; each
`output` a `### Returns` entry, its expression kept in `### Execution` as `let name =
…`, and a closing `return` of the outputs (one output: its value; several: an object
by name). Everything else is kept as written, in one ```prose fence.

A pure function of the text; what it could not carry over confidently is said in
`notes` (an `input` or `output` not at the top level, an explicit `return` that wins
over the outputs), never guessed silently.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

__all__ = ["LegacyProgram", "convert", "program_name"]

_INPUT = re.compile(r"^input\s+(?P<name>[A-Za-z_][\w-]*)\s*(?::\s*(?P<text>.*?))?\s*$")
_OUTPUT = re.compile(r"^output\s+(?P<name>[A-Za-z_][\w-]*)\s*=\s*(?P<rest>.*)$")
_NESTED_IO = re.compile(r"^\s+(input|output)\s+[A-Za-z_]")
_NAME = re.compile(r"[^A-Za-z0-9_-]+")
_BRANCH = re.compile(r"^(?P<indent>\s+)(?P<name>[A-Za-z_][\w-]*)\s*=(?!=)\s*(?P<rest>\S.*)$")
_PARALLEL = re.compile(r"^(?P<indent>\s*)parallel\b[^:]*:\s*(#.*)?$")


@dataclass(frozen=True, slots=True)
class LegacyProgram:
    """A legacy program's interface and its Contract Markdown form."""

    name: str
    title: str
    description: str
    inputs: tuple[tuple[str, str], ...]  # (name, description) in declared order
    outputs: tuple[str, ...]
    script: str  # the `### Execution` fence's content
    markdown: str
    notes: tuple[str, ...] = field(default_factory=tuple)


def program_name(filename: str) -> str:
    """The function name of `tides.prose` (its stem, made a valid contract name)."""
    stem = filename.rsplit("/", 1)[-1].removesuffix(".prose")
    return _NAME.sub("-", stem).strip("-") or "program"


def _description(text: str | None) -> str:
    if not text:
        return ""
    text = text.strip()
    if text.startswith('"') and text.endswith('"') and len(text) >= 2:
        try:
            found = json.loads(text)
        except ValueError:
            return text[1:-1]
        return str(found)
    return text


def _header(lines: list[str]) -> tuple[str, list[str], list[str]]:
    """The leading comment block as (title, description lines) and the lines after it."""
    index = 0
    while index < len(lines) and not lines[index].strip():
        index += 1
    comments: list[str] = []
    while index < len(lines) and lines[index].startswith("#"):
        comments.append(lines[index].lstrip("#").strip())
        index += 1
    if not comments:
        return "", [], lines
    return comments[0], [c for c in comments[1:] if c], lines[index:]


def convert(text: str, filename: str) -> LegacyProgram:
    """The Contract Markdown form of the legacy program `text` (named `filename`)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    name = program_name(filename)
    title, about, lines = _header(text.split("\n"))
    inputs: list[tuple[str, str]] = []
    outputs: list[str] = []
    notes: list[str] = []
    script: list[str] = []
    last_top = ""
    branches: list[int] = []  # indents of the `parallel:` blocks the line is inside
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if line.strip():
            while branches and indent <= branches[-1]:
                branches.pop()
        branch = _BRANCH.match(line)
        if branch and branches and not line.lstrip().startswith(("let ", "const ")):
            # a parallel branch `name = session …` declares `name` (legacy), as `let` does
            line = f"{branch['indent']}let {branch['name']} = {branch['rest']}"
        parallel = _PARALLEL.match(line)
        if parallel:
            branches.append(len(parallel["indent"]))
        found = _INPUT.match(line)
        if found:
            inputs.append((found["name"], _description(found["text"])))
            continue
        found = _OUTPUT.match(line)
        if found:
            outputs.append(found["name"])
            line = f"let {found['name']} = {found['rest']}"
        elif _NESTED_IO.match(line):
            notes.append(
                f"{filename}: `{line.strip()}` is not at the top level: kept as written "
                "(a mid-program input or a nested output has no Contract Markdown form)"
            )
        if line.strip() and not line[:1].isspace() and not line.startswith("#"):
            last_top = line
        script.append(line)
    while script and not script[0].strip():
        script.pop(0)
    while script and not script[-1].strip():
        script.pop()
    returned = last_top.startswith("return")
    if returned and outputs:
        notes.append(
            f"{filename}: the program ends with its own `return`, which stays its result; "
            f"the outputs ({', '.join(outputs)}) are listed as returns"
        )
    if not returned and outputs:
        value = outputs[0] if len(outputs) == 1 else "{ " + ", ".join(outputs) + " }"
        script += ["", f"return {value}"]
    returns = outputs or (["result"] if returned else [])
    if not outputs and not returned:
        notes.append(f"{filename}: the program has no `output`: the function returns nothing")
    body = "\n".join(script)
    parts = [
        "---",
        f"name: {name}",
        "kind: function",
        "---",
        "",
        f"# {title or name}",
        "",
    ]
    if about:
        parts += [" ".join(about), ""]
    parts += [f"Upgraded from the legacy program `{filename.rsplit('/', 1)[-1]}`.", ""]
    if inputs:
        parts += ["### Parameters", ""]
        parts += [f"- `{n}`: {d}" if d else f"- `{n}`" for n, d in inputs]
        parts.append("")
    if returns:
        parts += ["### Returns", ""]
        parts += [
            f"- `{n}`: the legacy program's `output {n}`"
            if n in outputs
            else f"- `{n}`: what the program returns"
            for n in returns
        ]
        parts.append("")
    ticks = max((len(run) for run in re.findall(r"`{3,}", body)), default=2) + 1
    parts += ["### Execution", "", "`" * ticks + "prose", body, "`" * ticks, ""]
    return LegacyProgram(
        name=name,
        title=title or name,
        description=" ".join(about),
        inputs=tuple(inputs),
        outputs=tuple(outputs),
        script=body,
        markdown="\n".join(parts),
        notes=tuple(notes),
    )
