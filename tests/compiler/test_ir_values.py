"""The IR is a value: every node of every corpus program hashes, and equal parses are equal."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from prosec.compiler.config import Config
from prosec.compiler.frozen import FrozenMap
from prosec.compiler.ir import Project
from prosec.compiler.lint import parse_texts
from prosec.compiler.pipeline import compile_texts, read_sources
from prosec.compiler.prosescript import PROSE_INFOS
from prosec.compiler.prosescript.parse import parse_script

from .corpus_support import INVALID, programs

SCALARS = (str, int, float, bool, type(None), Enum, date)


def nodes(value: Any) -> Iterator[Any]:
    """Every dataclass node and frozen container under `value`, depth first.

    Anything else must be a scalar: a dict, list or set anywhere fails the walk."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        yield value
        for field in dataclasses.fields(value):
            yield from nodes(getattr(value, field.name))
    elif isinstance(value, tuple | frozenset):
        yield value
        for item in value:
            yield from nodes(item)
    elif isinstance(value, FrozenMap):
        yield value
        for key, item in value.items():
            yield from nodes(key)
            yield from nodes(item)
    else:
        assert isinstance(value, SCALARS), f"{type(value).__name__} in the IR: {value!r}"


def _texts(root: Path) -> list[tuple[str, str]]:
    return read_sources(root, Config())[0]


def _roots() -> list[Path]:
    """The programs and the invalid examples with at least one readable source."""
    examples = sorted(p for p in INVALID.iterdir() if p.is_dir())
    return [root for root in (*programs(), *examples) if _texts(root)]


@pytest.mark.parametrize("root", _roots(), ids=lambda p: str(p.relative_to(p.parents[1])))
def test_every_node_of_a_compiled_program_hashes(root: Path) -> None:
    unit = compile_texts(_texts(root), Config()).unit
    scripts = [
        script
        for source in unit.project.files
        for fence in source.fences
        if fence.info in PROSE_INFOS and fence.closed
        for script in [parse_script(fence, source.path)[0]]
        if script is not None
    ]
    roots = (
        unit.project,
        unit.topology,
        tuple(unit.specs.items()),
        tuple(unit.validators.items()),
        unit.diagnostics,
        tuple(scripts),
    )
    kinds: Counter[str] = Counter()
    for node in nodes(roots):
        hash(node)
        kinds[type(node).__name__] += 1
    assert kinds["Project"] == 1 and kinds["SourceFile"] >= 1 and kinds["Contract"] >= 1


@pytest.mark.parametrize("root", _roots(), ids=lambda p: str(p.relative_to(p.parents[1])))
def test_equal_parses_are_equal_values(root: Path) -> None:
    texts = _texts(root)
    first, second = parse_texts(texts)[0], parse_texts(texts)[0]
    assert first is not second and first.files[0] is not second.files[0]
    assert first == second and hash(first) == hash(second)
    for one, other in zip(first.contracts, second.contracts, strict=True):
        assert one == other and hash(one) == hash(other)


def test_a_different_nested_frontmatter_value_is_a_different_contract() -> None:
    text = "---\nname: a\nkind: function\nmeta:\n  tags: [x, y]\n---\n### Returns\n- `x`: y\n"
    (before,) = parse_texts([("a.prose.md", text)])[0].contracts
    (after,) = parse_texts([("a.prose.md", text.replace("[x, y]", "[x, z]"))])[0].contracts
    assert before.frontmatter["meta"] == {"tags": ("x", "y")}
    assert before != after and before == replace(after, frontmatter=before.frontmatter)
    assert len({before, after, replace(after, frontmatter=before.frontmatter)}) == 2


def test_a_project_is_a_usable_dictionary_key() -> None:
    texts = [("a.prose.md", "---\nname: a\nkind: function\n---\n### Returns\n- `x`: y\n")]
    memo: dict[Project, str] = {parse_texts(texts)[0]: "seen"}
    assert memo[parse_texts(texts)[0]] == "seen"


def test_contract_kinds_are_one_enum_and_the_schema_agrees() -> None:
    import json

    from prosec.compiler.ir import KINDS, NODE_KINDS, ContractKind

    from ..conftest import REPO

    schema = json.loads((REPO / "schemas" / "compiled-intent.schema.json").read_text())
    written = schema["$defs"]["source"]["properties"]["kind"]["enum"]
    assert [*KINDS, "unknown"] == written
    assert set(NODE_KINDS) <= set(ContractKind) and ContractKind.GATEWAY == "gateway"
