"""`rules.RuleMemo` (the language server's per-file rule results) finds exactly what a
fresh run finds: over the corpus, after edits, and when only a neighbour changed what a
file may call."""

from __future__ import annotations

from pathlib import Path

import pytest
from prosec.compiler import rules
from prosec.compiler.lint import parse_texts

from .corpus_support import programs

CALLER = """---
name: caller
kind: responsibility
---

### Execution

```prose
call helper
```
"""

HELPER = """---
name: helper
kind: function
---

### Returns

- `answer`: the result
"""


def _texts(directory: Path) -> list[tuple[str, str]]:
    return [
        (path.relative_to(directory).as_posix(), path.read_text("utf-8"))
        for path in sorted(directory.rglob("*.prose.md"))
    ]


@pytest.mark.parametrize("directory", programs(), ids=lambda p: p.name)
def test_the_memo_finds_what_a_fresh_run_finds(directory: Path) -> None:
    texts = _texts(directory)
    memo = rules.RuleMemo()
    edits = [texts, texts]  # the second run answers every file from the memo
    for index, (path, text) in enumerate(texts):
        changed = list(texts)
        changed[index] = (path, text + f"\n## extra-{index}\n\n### Returns\n\n- `x`: y\n")
        edits.append(changed)
    for version in edits:
        project, _ = parse_texts(version)
        assert rules.run(project, memo=memo) == rules.run(project)


def test_a_neighbour_renamed_changes_an_unchanged_files_findings() -> None:
    memo = rules.RuleMemo()
    both = [("src/caller.prose.md", CALLER), ("src/helper.prose.md", HELPER)]
    project, _ = parse_texts(both)
    assert "prosescript_unknown_call" not in [d.code for d in rules.run(project, memo=memo)]
    renamed = [both[0], ("src/other.prose.md", HELPER.replace("name: helper", "name: other"))]
    project, _ = parse_texts(renamed)
    found = rules.run(project, memo=memo)
    assert found == rules.run(project)
    assert "prosescript_unknown_call" in [d.code for d in found]
