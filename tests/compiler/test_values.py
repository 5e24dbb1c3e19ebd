"""`@value` behaves as `@dataclass(frozen=True, slots=True)` would, without its codegen."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import typing
from dataclasses import FrozenInstanceError, field, replace

import pytest
from prosec.compiler import ir, lowered
from prosec.compiler.frozen import FrozenMap
from prosec.compiler.values import value


@value(kw_only=True)
class Note:
    """A keyword-only value with defaults."""

    text: str
    tags: tuple[str, ...] = ()
    extra: FrozenMap[str, int] = field(default_factory=FrozenMap)
    seen: int = field(default=0, compare=False, repr=False)

    def shout(self) -> str:
        return self.text.upper()


@value
class Pair:
    left: int
    right: str = "r"


@value(kw_only=True)
class Tagged(Note):
    """A value extending another."""

    weight: int = 1


def test_construction_defaults_and_factories() -> None:
    note = Note(text="a")
    assert (note.text, note.tags, note.extra, note.seen) == ("a", (), FrozenMap(), 0)
    assert Note(text="a").extra is not Note(text="b").extra  # a fresh value per instance
    assert Note(text="a", extra=FrozenMap({"k": 1})).extra == {"k": 1}
    assert Pair(1) == Pair(left=1, right="r") and Pair(1, "s").right == "s"
    assert note.shout() == "A"
    with pytest.raises(TypeError, match="keyword-only"):
        Note()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword"):
        Note(text="a", colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Note("a")  # type: ignore[misc]


def test_equality_and_hash_follow_the_compared_fields() -> None:
    one, same = Note(text="a", seen=1), Note(text="a", seen=2)
    assert (
        one == same and hash(one) == hash(same) and len({one, same}) == 1
    )  # `seen` is not compared
    assert one != Note(text="b") and one != Note(text="a", tags=("x",))
    assert Tagged(text="a") != Note(text="a")  # another class is another value
    assert (Pair(1) == (1, "r")) is False
    assert hash(Pair(1)) == hash(Pair(1)) and Pair(1) != Pair(2)


def test_values_are_frozen_and_slotted() -> None:
    note = Note(text="a")
    with pytest.raises(FrozenInstanceError):
        note.text = "b"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del note.text  # type: ignore[misc]
    assert not hasattr(note, "__dict__")
    assert Note.__slots__ == ("text", "tags", "extra", "seen")
    assert Tagged.__slots__ == ("weight",)  # a subclass adds only its own fields
    assert Pair.__match_args__ == ("left", "right") and Note.__match_args__ == ()


def test_repr_shows_the_repr_fields() -> None:
    assert repr(Note(text="a", seen=3)) == "Note(text='a', tags=(), extra=FrozenMap({}))"
    assert repr(Pair(1)) == "Pair(left=1, right='r')"


def test_the_dataclasses_module_sees_a_dataclass() -> None:
    note = Tagged(text="a", tags=("t",))
    assert dataclasses.is_dataclass(note)
    assert [f.name for f in dataclasses.fields(Tagged)] == [
        "text",
        "tags",
        "extra",
        "seen",
        "weight",
    ]
    assert replace(note, weight=2) == Tagged(text="a", tags=("t",), weight=2)
    assert dataclasses.asdict(Pair(1)) == {"left": 1, "right": "r"}
    hints = typing.get_type_hints(Tagged)  # what the cache codec reads
    assert hints["weight"] is int and hints["tags"] == tuple[str, ...]


def test_pickle_and_copies_round_trip() -> None:
    note = Tagged(text="a", extra=FrozenMap({"k": 1}), seen=4)
    for twin in (pickle.loads(pickle.dumps(note)), copy.copy(note), copy.deepcopy(note)):
        assert twin == note and twin.seen == 4 and type(twin) is Tagged


def test_a_class_with_its_own_slots_or_post_init_is_refused() -> None:
    with pytest.raises(TypeError):

        @value
        class Slotted:
            __slots__ = ("a",)
            a: int

    with pytest.raises(TypeError):

        @value
        class Checked:
            a: int

            def __post_init__(self) -> None: ...


@pytest.mark.parametrize("module", [ir, lowered], ids=lambda m: m.__name__)
def test_the_ir_classes_are_values(module: object) -> None:
    classes = [
        c for c in vars(module).values() if isinstance(c, type) and dataclasses.is_dataclass(c)
    ]
    assert classes
    for cls in classes:
        assert cls.__init__ is not object.__init__ and "_value_fields" in vars(cls), cls
        assert "__dict__" not in dir(cls), cls
