"""The cache codec: IR trees survive encode → JSON → decode, and bad data is refused."""

from __future__ import annotations

import dataclasses
import datetime
import math
import types
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from prosec.compiler.cache import LastBuild, ParseEntry
from prosec.compiler.cache_codec import CodecError, decode, encode, schema
from prosec.compiler.ir import Span
from prosec.compiler.parse import parse_source
from prosec.compiler.prosescript.ir import Script
from prosec.compiler.prosescript.parse import parse_script

from ..conftest import CORPUS
from .parse.test_properties import markdownish, mutated

PROGRAMS = sorted(CORPUS.rglob("*.prose.md"))


def through_json(hint: Any, value: Any) -> Any:
    """Encode, write and read as orjson does on disk, decode."""
    return decode(hint, orjson.loads(orjson.dumps(encode(hint, value))))


def entry_of(path: str, text: str) -> ParseEntry:
    source, found = parse_source(path, text)
    return ParseEntry(digest="0" * 64, source=source, diagnostics=tuple(found))


def readable(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:  # corpus/invalid/file_unreadable holds a Latin-1 file
        return None


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_every_corpus_program_round_trips(path: Path) -> None:
    text = readable(path)
    if text is None:
        assert path.parent.name == "file_unreadable"
        return
    entry = entry_of(path.relative_to(CORPUS).as_posix(), text)
    assert through_json(ParseEntry, entry) == entry


def test_the_corpus_is_there() -> None:
    assert len(PROGRAMS) > 150


def test_every_corpus_script_round_trips() -> None:
    """ProseScript trees: unions of many dataclasses, recursion through statement bodies."""
    scripts = 0
    for path in PROGRAMS:
        text = readable(path)
        if text is None:
            continue
        source, _ = parse_source(path.name, text)
        for fence in source.fences:
            if fence.info != "prose":
                continue
            script, _ = parse_script(fence, path.name)
            if script is not None:
                scripts += 1
                assert through_json(Script, script) == script
    assert scripts > 20


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(markdownish)
def test_markdown_shaped_text_round_trips(text: str) -> None:
    entry = entry_of("src/sample.prose.md", text)
    assert through_json(ParseEntry, entry) == entry


@SETTINGS
@given(mutated())
def test_mutated_programs_round_trip(text: str) -> None:
    entry = entry_of("src/sample.prose.md", text)
    assert through_json(ParseEntry, entry) == entry


def test_raw_yaml_values_keep_their_python_types() -> None:
    text = (
        "---\nname: n\nkind: responsibility\n"
        "when: 2024-05-01\nat: 2024-05-01T10:00:00+02:00\nblob: !!binary aGVsbG8=\n"
        "tags: !!set {a, b}\nbig: 123456789012345678901234567890\nneg: -9223372036854775809\n"
        "ratio: .inf\nodd: {1: one, 2.5: half, null: none}\npairs: !!omap [{x: 1}, {y: 2}]\n"
        "---\n# N\n"
    )
    entry = entry_of("src/n.prose.md", text)
    frontmatter = entry.source.contracts[0].frontmatter
    assert type(frontmatter["when"]) is datetime.date
    # the IR freezes YAML collections deep: a `!!set` is a frozenset
    assert type(frontmatter["blob"]) is bytes and type(frontmatter["tags"]) is frozenset
    assert None in frontmatter["odd"] and frontmatter["big"] > 2**64
    back = through_json(ParseEntry, entry)
    assert back == entry
    again = back.source.contracts[0].frontmatter
    assert {k: type(v) for k, v in again.items()} == {k: type(v) for k, v in frontmatter.items()}
    assert type(again["pairs"][0]) is tuple  # not a list: equal values, equal types


def test_non_finite_floats_survive() -> None:
    value = (math.nan, math.inf, -math.inf, -0.0, 1.5)
    back = through_json(tuple[float, ...], value)
    assert math.isnan(back[0]) and back[1:3] == (math.inf, -math.inf) and back[4] == 1.5
    assert math.copysign(1, back[3]) == -1
    assert math.isnan(through_json(Any, [math.nan])[0])


class Colour(StrEnum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    """The shapes the IR uses and may use after the move to immutable mappings."""

    name: str
    colour: Colour
    weight: int | float
    where: Path | None
    pairs: tuple[tuple[str, Any], ...] = ()
    table: Mapping[str, int] = dataclasses.field(default_factory=dict)
    frozen: types.MappingProxyType[str, Span] = dataclasses.field(
        default_factory=lambda: types.MappingProxyType({})
    )
    fixed: tuple[int, str] = (0, "")
    children: tuple[Node, ...] = ()
    either: Span | Colour | tuple[int, ...] | None = None


SPAN = Span(path="a.prose.md", line=1, column=2, end_line=3, end_column=4)
NODE = Node(
    name="root",
    colour=Colour.RED,
    weight=1.5,
    where=Path("src/a.prose.md"),
    pairs=(("k", {"nested": [1, "x"]}), ("t", (1, 2))),
    table={"a": 1},
    frozen=types.MappingProxyType({"s": SPAN}),
    fixed=(7, "seven"),
    children=(Node(name="leaf", colour=Colour.BLUE, weight=2, where=None, either=SPAN),),
    either=(1, 2),
)


def test_a_generic_dataclass_round_trips() -> None:
    back = through_json(Node, NODE)
    assert back == NODE
    assert type(back.frozen) is types.MappingProxyType  # a concrete mapping type is kept
    assert type(back.children[0].weight) is int and type(back.weight) is float
    assert back.children[0].either == SPAN


@pytest.mark.parametrize(
    ("hint", "data"),
    [
        (int, "1"),
        (int, True),  # a bool is not an int
        (int, 1.0),
        (bool, 1),
        (str, None),
        (float, 1),
        (int, {"int": "12"}),  # only raw values tag big integers
        (Any, {"int": "12x"}),
        (Any, {"int": "9" * 5000}),
        (float, {"float": "1.0"}),
        (Colour, "green"),
        (Colour, ["red"]),
        (tuple[int, ...], {"0": 1}),
        (tuple[int, str], [1]),
        (Mapping[str, int], {"a": 1}),  # mappings are pairs
        (Mapping[str, int], [["a", 1, 2]]),
        (Mapping[str, int], [[1, 1]]),
        (int | str, [2, 1]),  # no member 2
        (int | str, ["0", 1]),
        (int | str, 1),  # a union is [member, value]
        (Span, ["a.prose.md", 1, 2, 3]),  # a field short
        (Span, ["a.prose.md", 1, 2, 3, 4, 5]),
        (Span, {"path": "a.prose.md"}),
        (Span | None, ["a.prose.md", 1, 2, 3, "4"]),
        (Any, {"dict": [[[1], 2]]}),  # an unhashable key
        (Any, {"set": [[1]]}),
        (Any, {"code": "import os"}),
        (Any, {"tuple": [], "list": []}),
        (Any, {"date": "yesterday"}),
        (Any, {"bytes": "not base64!"}),
        (LastBuild, ["k", "sha", [], [], [["errors", "1"]]]),
    ],
)
def test_data_that_does_not_fit_is_refused(hint: Any, data: Any) -> None:
    with pytest.raises(CodecError):
        decode(hint, data)


@pytest.mark.parametrize(
    ("hint", "value"),
    [
        (int, True),
        (tuple[int, ...], [1]),  # a list where the IR promises a tuple
        (str, Colour.RED),
        (Span, NODE),
        (Any, object()),
        (Mapping[str, int], {1: 1}),
    ],
)
def test_values_that_do_not_fit_are_not_encoded(hint: Any, value: Any) -> None:
    with pytest.raises(CodecError):
        encode(hint, value)


def test_orjson_refuses_a_typed_int_beyond_64_bits() -> None:
    """The cache relies on it: such an entry is left out instead of stored wrongly."""
    with pytest.raises(orjson.JSONEncodeError):
        orjson.dumps(encode(Span, dataclasses.replace(SPAN, line=2**64)))
    assert through_json(Any, [2**64, -(2**63) - 1]) == [2**64, -(2**63) - 1]


def test_decoding_leaves_the_data_as_it_was() -> None:
    """The cache writes entries it read back unchanged, so decoding must not touch them."""
    data = orjson.loads(orjson.dumps(encode(Node, NODE)))
    before = orjson.dumps(data)
    decode(Node, data)
    assert orjson.dumps(data) == before


def test_deep_nesting_is_a_recursion_error_not_a_crash() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(RecursionError):
        decode(Any, deep)


def test_unsupported_hints_are_a_programming_error() -> None:
    with pytest.raises(TypeError):
        encode(list[int], [1])


def test_the_schema_follows_every_reachable_field() -> None:
    @dataclasses.dataclass(frozen=True)
    class Leaf:
        value: int

    @dataclasses.dataclass(frozen=True)
    class Other:
        value: str

    assert schema(LastBuild, ParseEntry) == schema(LastBuild, ParseEntry)
    assert schema(Leaf) != schema(Other)
    assert schema(Node) != schema(LastBuild)
