"""A planted cache never runs code: the real `prosec build`, `build --check` and `lint`.

A malicious pickle (unpickling it creates a marker file) is planted wherever any prosec
version read a cache from (`dist/.cache/*.pickle`, which a pull request can commit) and in
the cache folder of today's prosec; garbage JSON is planted there too. Every command must
leave the marker uncreated, exit as it would without the files, and build a manifest
byte-identical to `--no-cache`.
"""

from __future__ import annotations

import dataclasses
import pathlib
import pickle
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from prosec.compiler.cache import LAST_FILE, PARSE_FILE, project_dir
from prosec.compiler.ir import Contract

from ..conftest import CORPUS, Runner, prosec_bin

MANIFEST = Path("dist") / "manifest.next.json"


class Touch:
    """Unpickling this creates `marker`: the payload a hostile commit would carry."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        return pathlib.Path.touch, (self.marker,)


def payload(marker: Path) -> bytes:
    return pickle.dumps({"header": None, "entries": Touch(marker)})


def test_the_payload_does_run_when_unpickled(tmp_path: Path) -> None:
    """Without this, the tests below could pass with a payload that does nothing."""
    marker = tmp_path / "ran"
    pickle.loads(payload(marker))
    assert marker.exists()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    target = tmp_path / "project"
    shutil.copytree(CORPUS / "wiring-facets", target)
    return target


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The manifest a build without any cache writes (the same bytes wherever it is built)."""
    target = tmp_path_factory.mktemp("reference") / "project"
    shutil.copytree(CORPUS / "wiring-facets", target)
    result = subprocess.run(
        [prosec_bin(), "build", str(target), "--offline-tools", "--no-cache"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return (target / MANIFEST).read_bytes()


def plant_pickles(root: Path, cache: Path, marker: Path) -> list[Path]:
    old = root / "dist" / ".cache"
    new = project_dir(cache, root)
    places = [old / "last.pickle", old / "parse.pickle", new / LAST_FILE, new / PARSE_FILE]
    places += [new / "last.pickle", new / "parse.pickle"]
    for place in places:
        place.parent.mkdir(parents=True, exist_ok=True)
        place.write_bytes(payload(marker))
    (old / ".gitignore").write_text("*\n")  # as prosec 0.x left it
    return places


def test_planted_pickles_never_run(
    root: Path, reference: bytes, build_cache_dir: Path, run_prosec: Runner, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    clean_lint = run_prosec("lint", root)
    plant_pickles(root, build_cache_dir, marker)

    check = run_prosec("build", root, "--check", "--offline-tools")
    assert not marker.exists()
    assert check.returncode == 1 and "is stale" in check.stderr  # nothing built yet

    built = run_prosec("build", root, "--offline-tools")
    assert not marker.exists()
    assert built.returncode == 0, built.stderr
    assert "(full build: the build cache is unreadable (last.json: not valid JSON))" in (
        built.stderr
    )
    assert (root / MANIFEST).read_bytes() == reference

    lint = run_prosec("lint", root)
    assert not marker.exists()
    assert (lint.returncode, lint.stdout) == (clean_lint.returncode, clean_lint.stdout)

    plant_pickles(root, build_cache_dir, marker)  # the build replaced the new-location ones
    fresh = run_prosec("build", root, "--check", "--offline-tools")
    assert not marker.exists()
    assert fresh.returncode == 0 and "is current" in fresh.stderr
    assert (root / "dist" / ".cache" / "last.pickle").exists()  # ignored, not read


def frontmatter_of_an_entry(value: Any, raw: bytes = b"") -> Callable[[bytes], bytes]:
    """A well-formed parse.json whose first contract's frontmatter is `value`.

    `raw` replaces the string "RAW" in it, for JSON deeper than orjson writes.
    """
    index = [f.name for f in dataclasses.fields(Contract)].index("frontmatter")

    def damage(data: bytes) -> bytes:
        document = orjson.loads(data)
        path = next(iter(document["entries"]))  # each entry is stored as its own JSON text
        entry = orjson.loads(document["entries"][path])
        entry[1][2][0][index] = value
        document["entries"][path] = orjson.dumps(entry).replace(b'"RAW"', raw).decode()
        return orjson.dumps(document)

    return damage


def keep_header(key: str, value: Any) -> Callable[[bytes], bytes]:
    def damage(data: bytes) -> bytes:
        return orjson.dumps({"header": orjson.loads(data)["header"], key: value})

    return damage


GARBAGE: dict[str, tuple[str, Callable[[bytes], bytes], str]] = {
    "wrong types": (LAST_FILE, lambda d: b'{"header": {"format": "2"}, "last": 7}', "header"),
    "entries of a matching header do not decode": (
        PARSE_FILE,
        keep_header(
            "entries", {"src/fx-hedger.prose.md": orjson.dumps(["0" * 64, "x", []]).decode()}
        ),
        "parse.json: expected SourceFile",
    ),
    "last build of a matching header does not decode": (
        LAST_FILE,
        keep_header("last", ["key", "sha", [["cli", "sh"]], [], [], []]),
        "last.json: expected HostCheck",
    ),
    "a raw value with an unknown tag": (
        PARSE_FILE,
        frontmatter_of_an_entry([["name", {"__reduce__": ["os.system", "touch pwned"]}]]),
        "parse.json: not a stored value",
    ),
    "truncated": (PARSE_FILE, lambda d: d[: len(d) * 2 // 3], "parse.json: not valid JSON"),
    "an entry that is not JSON text": (
        PARSE_FILE,
        keep_header("entries", {"src/fx-hedger.prose.md": ["0" * 64, "x", []]}),
        "parse.json: an entry is not stored as JSON text",
    ),
    "an entry whose JSON text is cut short": (
        PARSE_FILE,
        keep_header("entries", {"src/fx-hedger.prose.md": '["' + "0" * 64}),
        "parse.json: not valid JSON",
    ),
    "nesting beyond the JSON parser": (
        LAST_FILE,
        lambda d: b'{"header": {}, "last": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "last.json: not valid JSON",
    ),
    "nesting beyond the decoder": (
        PARSE_FILE,
        frontmatter_of_an_entry([["deep", "RAW"]], b"[" * 1000 + b"1" + b"]" * 1000),
        "parse.json: nested too deeply",
    ),
    "a pickle under the JSON name": (LAST_FILE, lambda d: payload(Path("pwned")), "not valid JSON"),
}


@pytest.mark.parametrize("case", GARBAGE, ids=str)
def test_garbage_json_is_a_cold_build(
    case: str, root: Path, reference: bytes, build_cache_dir: Path, run_prosec: Runner
) -> None:
    name, damage, reason = GARBAGE[case]
    assert run_prosec("build", root, "--offline-tools").returncode == 0  # a genuine cache
    target = project_dir(build_cache_dir, root) / name
    target.write_bytes(damage(target.read_bytes()))

    check = run_prosec("build", root, "--check", "--offline-tools", cwd=root)
    assert check.returncode == 0 and "is current" in check.stderr, check.stderr
    (root / MANIFEST).unlink()
    built = run_prosec("build", root, "--offline-tools", cwd=root)
    assert built.returncode == 0, built.stderr
    assert "full build: the build cache is unreadable (" in built.stderr
    assert reason in built.stderr
    assert (root / MANIFEST).read_bytes() == reference
    assert not (root / "pwned").exists()
    again = run_prosec("build", root, "--offline-tools")
    assert "is up to date" in again.stderr  # the cache was rewritten whole
