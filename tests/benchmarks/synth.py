"""A generator of synthetic OpenProse projects: N contracts with realistic text and wiring.

    python -m tests.benchmarks.synth 1000 /tmp/synthetic

Roughly 6% gateways, 10% functions, the rest responsibilities with 0–3 `####` facets.
Each responsibility requires 1–3 earlier nodes (so the graph is a DAG), written in the
styles real programs use: a named facet, `the x facet of y`, `(Maintained by y)`, a
bare item name, a facet family, and a producer mentioned in words.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from prosec.compiler.rules.identity import suggested_id

WORDS = [
    "account",
    "signal",
    "review",
    "invoice",
    "ticket",
    "release",
    "incident",
    "forecast",
    "ledger",
    "renewal",
    "pipeline",
    "market",
    "churn",
    "usage",
    "vendor",
    "contract",
    "roadmap",
    "feedback",
    "campaign",
    "budget",
    "latency",
    "deploy",
    "audit",
    "quota",
    "cohort",
    "region",
    "partner",
    "inventory",
    "pricing",
    "support",
]
FACETS = ("summary", "history", "risk", "actions", "metrics", "owners", "timeline", "status")
LEAD = (
    "A current, corroborated view of each {a} {b}, keyed by `{a}_id`. Each entry carries a "
    "stable `name`, the latest `{b}_score` and a `last_checked` stamp; `fetched_at` and "
    "`request_id` are immaterial everywhere. Entries are ordered by `{a}_id` before hashing."
)


def _name(index: int, rng: random.Random) -> str:
    return f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{index}"


def _need(producer: str, facets: list[str], style: int, rng: random.Random) -> str:
    if facets and style == 0:
        facet = rng.choice(facets)
        return f"- `{facet}-view`: the `{facet}` facet of `{producer}` (NOT `@atomic`)"
    if style == 1:
        return (
            f"- `{producer.split('-')[0]}-feed`: the latest truth. *(Maintained by `{producer}`.)*"
        )
    if style == 2:
        return f"- `{producer}-state`: what `{producer}` keeps current, via `@atomic`"
    words = producer.replace("-", " ")
    return f"- the current picture from the {words} node, whatever moved since the last wake"


def contract(
    index: int, name: str, kind: str, producers: list[tuple[str, list[str]]], rng: random.Random
) -> str:
    a, b = rng.choice(WORDS), rng.choice(WORDS)
    lines = ["---", f"name: {name}", f"kind: {kind}"]
    if kind == "responsibility":
        lines.append(f"id: {suggested_id(name)}")
    lines += ["---", "", f"# {name.replace('-', ' ').title()}", ""]
    if kind == "function":
        lines += [
            "### Parameters",
            "",
            f"- `{a}`: the {a} to examine",
            f"- `{b}`: context for the {b}",
            "",
            "### Returns",
            "",
            f"- `{a}_report`: a concise {a} report with sources",
            "",
            "### Execution",
            "",
            "```prose",
            "let found = call researcher",
            f"  topic: {a}",
            "return found",
            "```",
            "",
        ]
        return "\n".join(lines)
    lines += ["### Goal", "", f"Keep the {a} {b} view current for the team that owns it.", ""]
    if kind == "gateway":
        lines += [
            "### Continuity",
            "",
            "- external-driven",
            "",
            "### Receives",
            "",
            f"- POST /hooks/{name}",
            "",
        ]
    elif producers:
        lines += ["### Requires", ""]
        lines += [_need(p, f, rng.randrange(4), rng) for p, f in producers]
        lines.append("")
    lines += ["### Maintains", "", LEAD.format(a=a, b=b), ""]
    lines += [f"- `{a}`: the {a} per {b}, with its evidence", f"- `{b}_score`: a 0–100 score"]
    lines += [
        f"- postcondition: every `{a}` entry has a `source`",
        "- postcondition: the view is specific, never generic",
        "",
    ]
    for facet in producers_facets(name, rng):
        lines += [
            f"#### {facet}",
            "",
            f"The {facet} of each {a}. Material: `{facet}_items` "
            "(unordered) and each item's owner.",
            "",
            f"- `{facet}_items`: the {facet} entries",
            "",
        ]
    if kind == "responsibility":
        cadence = "- self-driven: re-check every 6h" if index % 7 == 0 else "- input-driven"
        lines += ["### Continuity", "", cadence, ""]
    return "\n".join(lines)


RESEARCHER = """---
name: researcher
kind: function
---

### Parameters

- `topic`: the question to investigate

### Returns

- `findings`: a concise answer with its sources
"""


def producers_facets(name: str, rng: random.Random) -> list[str]:
    return sorted(
        random.Random(name).sample(FACETS, random.Random(name).randrange(4)), key=FACETS.index
    )


def generate(count: int, root: Path, seed: int = 7) -> list[Path]:
    """Write `count` contracts under root/src; returns the written paths."""
    rng = random.Random(seed)
    src = root / "src"
    src.mkdir(parents=True, exist_ok=True)
    nodes: list[tuple[str, list[str]]] = []
    # the helper every generated function's Execution calls, so each `call` resolves
    helper = src / "researcher.prose.md"
    helper.write_text(RESEARCHER, encoding="utf-8")
    written = [helper]
    for index in range(count - 1):
        name = _name(index, rng)
        roll = rng.random()
        kind = (
            "gateway"
            if roll < 0.06 or not nodes
            else ("function" if roll < 0.16 else "responsibility")
        )
        chosen = (
            rng.sample(nodes[-200:], min(len(nodes), rng.randint(1, 3)))
            if kind == "responsibility"
            else []
        )
        path = src / f"{name}.prose.md"
        path.write_text(contract(index, name, kind, chosen, rng), encoding="utf-8")
        written.append(path)
        if kind != "function":
            nodes.append((name, producers_facets(name, rng)))
    return written


FILES = 50


def _producer(i: int) -> str:
    facets = "\n".join(
        f"#### facet-{i}-{j}\nPart {j} of the truth of node {i}: entries with a source link, "
        f"a confidence and the evidence behind it. Material: the entries and sources.\n"
        for j in range(3)
    )
    return (
        f"---\nname: node-{i:02d}\nkind: responsibility\n---\n\n# Node {i}\n\n### Goal\n\n"
        f"Node {i} keeps a current, sourced view of topic {i} for everyone downstream.\n\n"
        f"### Requires\n\n- `facet-{max(i - 1, 0)}-1`: the previous node's second part\n\n"
        f"### Maintains\n\nOne record per item; fetch timestamps are immaterial.\n\n{facets}\n"
        "### Continuity\n\n- input-driven\n\n### Tools\n\n(none)\n"
    )


# an `### Execution` fence reading the summary's inputs: the ProseScript a 5 KB file with
# wiring carries in the fence benchmark (every name declared, every call inline)
_EXECUTION = """### Execution

```prose
let changes = []
for source in ["node-01", "node-02", "node-03"]:
  append read_subscription(source) to changes
let ranked = call rank-changes(changes)
let owners = []
let reasons = []
parallel:
  owners = session "Find the owner of each change"
    context: ranked
  reasons = session "Say why each change matters"
    context: ranked
if ranked is empty:
  return { summary: "A quiet week" }
return { summary: ranked, owners: owners, reasons: reasons }
```

## rank-changes

### Parameters

- `changes`: the week's changes

### Returns

- `ranked`: the changes, most important first

"""


def _large(target: int = 5_000, prose: bool = False) -> str:
    needs = "\n".join(
        f"- `facet-{i}-{i % 3}`: part {i % 3} of node {i}'s truth, read for the weekly summary"
        for i in range(1, 12)
    )
    body = (
        "---\nname: summary\nkind: responsibility\n---\n\n# Weekly summary\n\n### Goal\n\n"
        "A weekly summary of everything the other nodes know, written for the team.\n\n"
        f"### Requires\n\n{needs}\n\n### Maintains\n\n"
        "One summary per week; render timestamps are immaterial.\n\n"
    )
    tail = "### Continuity\n\n- input-driven\n\n" + (_EXECUTION if prose else "")
    tail += "### Tools\n\n(none)\n"
    section = 0
    while len((body + tail).encode("utf-8")) < target:
        body += (
            f"#### part-{section}\nSection {section} of the summary: the three most important "
            "changes of the week, each with its source, its owner and why it matters. "
            "Material: the changes and their sources; wording is immaterial.\n\n"
        )
        section += 1
    return body + tail


def wired_project(root: Path, prose: bool = False) -> Path:
    """A 50-file project, wired as a chain of facets; returns its 5 KB file (a summary
    that requires eleven facets of the others; with `prose`, its `### Execution` is a
    ```prose fence)."""
    (root / "src").mkdir(parents=True)
    (root / "prose.toml").write_text("[lint]\n", encoding="utf-8")
    for i in range(FILES - 1):
        (root / "src" / f"node-{i:02d}.prose.md").write_text(_producer(i), encoding="utf-8")
    (root / "src" / "summary.prose.md").write_text(_large(prose=prose), encoding="utf-8")
    return root / "src" / "summary.prose.md"


if __name__ == "__main__":
    generate(int(sys.argv[1]), Path(sys.argv[2]))
