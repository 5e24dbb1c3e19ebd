"""The script IR's node base behaves as a frozen, slotted, keyword-only dataclass would."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import FrozenInstanceError, replace

import pytest
from prosec.compiler.ir import Span
from prosec.compiler.prosescript import ir
from prosec.compiler.prosescript.ir import Break, Continue, Name, Ref
from prosec.compiler.prosescript.node import Node, fields

SPAN = Span(path="a.prose.md", line=1, column=1, end_line=1, end_column=4)
OTHER = Span(path="a.prose.md", line=2, column=1, end_line=2, end_column=4)


def test_fields_are_the_annotations_in_order() -> None:
    assert fields(Ref) == ("parts", "span", "head_span")
    assert Ref.__slots__ == ("parts", "span", "head_span")
    assert fields(Name(text="a", span=SPAN)) == ("text", "span")


def test_nodes_are_dataclasses_to_the_dataclasses_module() -> None:
    name = Name(text="a", span=SPAN)
    assert dataclasses.is_dataclass(name) and dataclasses.is_dataclass(Name)
    assert [(f.name, f.kw_only) for f in dataclasses.fields(Ref)] == [
        ("parts", True),
        ("span", True),
        ("head_span", True),
    ]
    assert dataclasses.asdict(name) == {"text": "a", "span": dataclasses.asdict(SPAN)}
    assert not dataclasses.is_dataclass(Node)


def test_every_ir_class_is_a_slotted_node() -> None:
    classes = [
        c
        for c in vars(ir).values()
        if isinstance(c, type) and issubclass(c, Node) and c is not Node
    ]
    assert len(classes) > 40
    for cls in classes:
        assert "__dict__" not in dir(cls), cls
        assert cls.__slots__ == fields(cls) and fields(cls), cls


def test_values_compare_and_hash_by_fields_and_type() -> None:
    one, same = Name(text="a", span=SPAN), Name(text="a", span=SPAN)
    assert one == same and hash(one) == hash(same) and len({one, same}) == 1
    assert one != Name(text="a", span=OTHER) and one != Name(text="b", span=SPAN)
    # two kinds with the same field values are still different values
    assert Break(span=SPAN) != Continue(span=SPAN)
    assert Break(span=SPAN) != ("x",) and (Break(span=SPAN) == object()) is False


def test_nodes_are_frozen() -> None:
    name = Name(text="a", span=SPAN)
    with pytest.raises(FrozenInstanceError):
        name.text = "b"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del name.text  # type: ignore[misc]
    with pytest.raises(AttributeError):
        name.extra = 1  # type: ignore[attr-defined]


def test_construction_is_keyword_only_and_complete() -> None:
    with pytest.raises(TypeError, match="span"):
        Name(text="a")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="colour"):
        Name(text="a", span=SPAN, colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Name("a", SPAN)  # type: ignore[misc]


def test_repr_names_every_field() -> None:
    assert repr(Break(span=SPAN)) == f"Break(span={SPAN!r})"


def test_replace_copy_and_pickle_keep_the_value() -> None:
    name = Name(text="a", span=SPAN)
    renamed = replace(name, text="b")
    assert renamed == Name(text="b", span=SPAN) and name.text == "a"
    with pytest.raises(TypeError, match="colour"):
        replace(name, colour="red")  # type: ignore[call-arg]
    assert copy.copy(name) == name and copy.deepcopy(name) == name
    assert pickle.loads(pickle.dumps(name)) == name
