"""FrozenMap and deep freeze/thaw: immutable, hashable, order-keeping values."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest
from prosec.compiler.frozen import FrozenMap, freeze, thaw

YAML_LIKE = {"b": [1, {"c": "d"}], "a": {"x": [True, None]}, "s": {"k"}}


def test_freeze_makes_every_container_immutable_and_hashable() -> None:
    frozen = freeze(YAML_LIKE)
    assert isinstance(frozen, FrozenMap)
    assert frozen["b"] == (1, FrozenMap({"c": "d"})) and frozen["s"] == frozenset({"k"})
    assert hash(frozen) == hash(freeze(YAML_LIKE))
    with pytest.raises(TypeError):
        frozen["a"] = 1  # type: ignore[index]
    with pytest.raises(AttributeError):
        frozen._data = {}  # type: ignore[misc]


def test_equality_is_by_content_not_order() -> None:
    one, other = FrozenMap({"a": 1, "b": 2}), FrozenMap({"b": 2, "a": 1})
    assert one == other and hash(one) == hash(other)
    assert one == {"a": 1, "b": 2} and one != {"a": 1} and one != (("a", 1), ("b", 2))
    assert FrozenMap({"a": (1,)}) != FrozenMap({"a": (2,)})


def test_thaw_gives_back_the_json_shape_in_insertion_order() -> None:
    thawed = thaw(freeze({"z": [1, {"y": 2, "x": [3]}], "a": "b"}))
    assert thawed == {"z": [1, {"y": 2, "x": [3]}], "a": "b"}
    assert list(thawed) == ["z", "a"] and list(thawed["z"][1]) == ["y", "x"]
    assert type(thawed["z"]) is list and type(thawed["z"][1]) is dict


def test_a_pickled_map_rehashes_in_another_process() -> None:
    frozen = freeze({"name": "a", "tags": ["x", "y"]})
    hash(frozen)  # caches a hash that is only valid in this process (string hashing is salted)
    program = (
        "import pickle, sys\n"
        "from prosec.compiler.frozen import freeze\n"
        "loaded = pickle.loads(sys.stdin.buffer.read())\n"
        "print({loaded: 1}.get(freeze({'name': 'a', 'tags': ['x', 'y']})))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program],
        input=pickle.dumps(frozen),
        capture_output=True,
        check=True,
    )
    assert result.stdout.decode().strip() == "1"
