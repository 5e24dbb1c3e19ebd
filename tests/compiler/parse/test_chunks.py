"""The chunked re-parser equals `parse_source` exactly: over the corpus, and after random
edits that open and close the blocks a cut must not cross (fences, HTML, lists, quotes)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prosec.compiler.parse import parse_source
from prosec.compiler.parse.chunks import Reparser

from ...conftest import REPO

CORPUS = sorted((REPO / "corpus").rglob("*.prose.md"))

SAMPLE = """---
name: sample
kind: responsibility
---

# Sample

Preamble text.

### Maintains

A view of `x`.

## helper-one

### Requires

- the summary facet of sample

```prose
let x = 1
```

## helper-two

- item one
- item two

## helper-three

> quoted

| a | b |
|---|---|
| 1 | 2 |
"""

SNIPPETS = [
    "```",
    "```prose\n",
    "~~~\n",
    "<!--",
    "-->",
    "<div>\n",
    "</div>\n",
    "<pre>\n",
    "## x\n",
    "##\n",
    "## ",
    "\n",
    "- a\n",
    "  - b\n",
    "1. one\n",
    "    code\n",
    "> q\n",
    "|a|b|\n|-|-|\n",
    "---\n",
    "===\n",
    "x",
    "[ref]: /url\n",
    "### Emits\n",
    "#### facet\n",
]


def _reparsed(path: str, texts: list[str]) -> None:
    reparser = Reparser()
    for text in texts:
        assert reparser(path, text) == parse_source(path, text)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(p.relative_to(REPO / "corpus")))
def test_corpus_file_parses_the_same(path: Path) -> None:
    text = path.read_bytes().decode("utf-8", errors="replace")
    _reparsed("src/a.prose.md", [text, text + "\nmore\n", text.replace("\n", "\n\n", 3)])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(SNIPPETS)), max_size=12))
def test_random_edits_parse_the_same(edits: list[tuple[int, str]]) -> None:
    texts, text = [SAMPLE], SAMPLE
    for where, snippet in edits:
        at = where % (len(text) + 1)
        text = text[:at] + snippet + text[at:]
        texts.append(text)
    _reparsed("src/sample.prose.md", texts)


def test_typing_in_one_chunk_reuses_the_others() -> None:
    reparser = Reparser()
    first, _ = reparser("a.prose.md", SAMPLE)
    edited = SAMPLE.replace("- item one", "- item one, edited")
    second, found = reparser("a.prose.md", edited)
    assert (second, found) == parse_source("a.prose.md", edited)
    unchanged = [c for c in first.contracts if c.name != "helper-two"]
    assert all(any(c is d for d in second.contracts) for c in unchanged)


def test_random_deletions_parse_the_same() -> None:
    rng = random.Random(14)
    for path in CORPUS[:40]:
        text = path.read_bytes().decode("utf-8", errors="replace")
        texts = [text]
        for _ in range(6):
            at = rng.randrange(len(text) + 1)
            text = text[:at] + text[at + rng.randrange(1, 40) :]
            texts.append(text)
        _reparsed("src/a.prose.md", texts)
