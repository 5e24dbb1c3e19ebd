"""The build cache in-process: where it lives, what it keys on and why a rebuild is full."""

from __future__ import annotations

import ast
import dataclasses
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from platformdirs import user_cache_dir
from prosec.compiler import __version__
from prosec.compiler.build import BuildOptions, BuildOutcome, build
from prosec.compiler.cache import CHECKS_FILE, LAST_FILE, PARSE_FILE, WIRING_FILE, project_dir
from prosec.compiler.commands.build import cache_base
from prosec.compiler.config import Config, WiringPin, load
from prosec.compiler.diagnostics import Severity
from prosec.compiler.ir import Contract

from ..conftest import CORPUS, REPO


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A project whose build has a warning, so the last build carries diagnostics."""
    target = tmp_path / "project"
    shutil.copytree(CORPUS / "wiring-unsatisfied", target)
    return target


def run(root: Path, cache: Path, **overrides: Any) -> BuildOutcome:
    config = load(root).with_overrides(offline_tools=True, **overrides)
    return build(root, config, None, BuildOptions(cache_dir=cache))


def cache_file(root: Path, cache: Path, name: str) -> Path:
    return project_dir(cache, root) / name


def rewrite(path: Path, change: Any) -> None:
    data = orjson.loads(path.read_bytes())
    change(data)
    path.write_bytes(orjson.dumps(data))


def first_source(root: Path) -> Path:
    return sorted((root / "src").glob("*.prose.md"))[0]


def test_cold_then_noop_then_incremental(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = run(root, cache)
    assert first.status == "written" and first.note == "full build: no build cache yet"
    assert [d.severity for d in first.diagnostics] == [Severity.WARNING]
    again = run(root, cache)
    assert again.status == "up-to-date"
    assert again.diagnostics == first.diagnostics and again.summary == first.summary
    changed = first_source(root)
    changed.write_text(changed.read_text() + "\nOne more line.\n")
    third = run(root, cache)
    # the changed file holds both needs: both are wired again (the Forme memo spares the
    # needs of unchanged files that no change reaches, tests/compiler/test_incremental_wiring.py)
    assert third.note == "incremental build: reparsed 1 of 2 files, re-wired 2 of 2 needs"
    assert run(root, cache).status == "up-to-date"  # the saved cache holds both entries


def test_the_cache_lives_outside_the_project(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    run(root, cache)
    folder = project_dir(cache, root)
    assert sorted(p.name for p in folder.iterdir()) == [
        CHECKS_FILE,
        LAST_FILE,
        PARSE_FILE,
        WIRING_FILE,
    ]
    # dist/ holds the manifest and the sources as compiled (runtime/provenance.py), no cache
    assert sorted(p.name for p in (root / "dist").iterdir()) == [
        "manifest.next.json",
        "sources",
        "sources.next.json",
    ]
    assert project_dir(cache, root / "src" / "..") == folder  # keyed by the resolved path
    other = tmp_path / "other"
    shutil.copytree(root, other)
    assert project_dir(cache, other) != folder


def test_no_cache_dir_means_no_cache(root: Path) -> None:
    config = load(root).with_overrides(offline_tools=True)
    outcome = build(root, config, None, BuildOptions())
    assert outcome.note == "full build (--no-cache)"
    assert build(root, config, None, BuildOptions()).status == "written"


def test_version_change(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    run(root, cache)
    rewrite(cache_file(root, cache, LAST_FILE), lambda d: d["header"].update(prosec="0.0.1"))
    note = run(root, cache).note
    assert note == f"full build: prosec changed version (0.0.1 → {__version__})"


def test_config_change(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    run(root, cache)
    assert run(root, cache, strict=True).note == (
        "full build: prose.toml or the command-line settings changed"
    )


@pytest.mark.parametrize("key", ["format", "schema"])
def test_old_format(root: Path, tmp_path: Path, key: str) -> None:
    cache = tmp_path / "cache"
    run(root, cache)
    value = 1 if key == "format" else "0" * 64
    rewrite(cache_file(root, cache, LAST_FILE), lambda d: d["header"].update({key: value}))
    assert run(root, cache).note == "full build: the build cache has an old format"


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda d: b"\x80\x04garbage", "last.json: not valid JSON"),
        (lambda d: d[: len(d) // 2], "last.json: not valid JSON"),
        (lambda d: b"[]", "last.json: not a prosec build cache"),
        (lambda d: b'{"header": 1, "last": null}', "last.json: malformed header"),
        (
            lambda d: d.replace(__version__.encode(), b"\\u001b[2J"),
            "last.json: malformed header",  # never printed: it could drive the terminal
        ),
        (lambda d: d.replace(b'"last":[', b'"last":[1,'), "last.json: expected LastBuild"),
    ],
)
def test_unreadable_last_build(root: Path, tmp_path: Path, damage: Any, reason: str) -> None:
    cache = tmp_path / "cache"
    first = run(root, cache)
    target = cache_file(root, cache, LAST_FILE)
    target.write_bytes(damage(target.read_bytes()))
    outcome = run(root, cache)
    assert outcome.note.startswith(f"full build: the build cache is unreadable ({reason}")
    assert outcome.status == "written" and outcome.diagnostics == first.diagnostics
    assert run(root, cache).status == "up-to-date"  # rewritten whole


def test_an_entry_that_does_not_decode_discredits_the_file(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    run(root, cache)
    changed = first_source(root)
    changed.write_text(changed.read_text() + "\nOne more line.\n")
    target = cache_file(root, cache, PARSE_FILE)
    line = [f.name for f in dataclasses.fields(Contract)].index("frontmatter")

    def damage(data: Any) -> None:
        path = list(data["entries"])[-1]  # each entry is stored as its own JSON text
        entry = orjson.loads(data["entries"][path])
        entry[1][2][0][line] = [["deep", "not a pair", 3]]
        data["entries"][path] = orjson.dumps(entry).decode()

    rewrite(target, damage)
    outcome = run(root, cache)
    assert outcome.note == (
        "full build: the build cache is unreadable (parse.json: expected a [key, value] pair)"
    )


def test_missing_parse_file(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    run(root, cache)
    cache_file(root, cache, PARSE_FILE).unlink()
    (root / "dist" / "manifest.next.json").unlink()
    note = run(root, cache).note
    assert note == "full build: the build cache is incomplete (parse.json is missing)"


def test_an_unwritable_cache_does_not_fail_the_build(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "not-a-directory"
    cache.write_text("")
    outcome = run(root, cache)
    assert outcome.status == "written"
    assert (
        outcome.note.startswith("full build: the build cache is unreadable (last.json: ")
        and "; the build cache could not be saved (" in outcome.note
    )


def test_cache_base_reads_the_environment_in_the_cli_layer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PROSEC_CACHE_DIR", str(tmp_path))
    assert cache_base() == tmp_path
    monkeypatch.delenv("PROSEC_CACHE_DIR")
    assert cache_base() == Path(user_cache_dir("prosec"))


def test_the_config_key_covers_every_setting_but_its_path() -> None:
    base = Config()
    changed = {
        "root": Path("elsewhere"),
        "select": ("wiring_*",),
        "ignore": ("id_missing",),
        "severity": {"id_missing": Severity.ERROR},
        "strict": True,
        "pins": (WiringPin(subscriber="a", need="b", producer="c"),),
        "offline_tools": True,
        "mcp_registries": ("mcp.json",),
        "skill_paths": ("skills",),
        "render": {"default": {"kind": "replay"}},
        "source": "contracts",
        "emit_artifacts": True,
        "dependency_urls": {"github.com": "mirrors/github"},
        "raw": {"render": {"default": {"kind": "replay"}}},
    }
    names = {f.name for f in dataclasses.fields(Config)}
    assert names - set(changed) <= {"path"}, "a new Config field: add it here"
    for name, value in changed.items():
        assert dataclasses.replace(base, **{name: value}).cache_key() != base.cache_key(), name
    assert dataclasses.replace(base, path=Path("prose.toml")).cache_key() == base.cache_key()
    one = Config(severity={"a": Severity.INFO, "b": Severity.ERROR})
    other = Config(severity={"b": Severity.ERROR, "a": Severity.INFO})
    assert one.cache_key() == other.cache_key()  # the order settings were written in


def test_no_module_pickles() -> None:
    """Nothing prosec ships can load code from data: no pickle, marshal or shelve."""
    banned = {"pickle", "cPickle", "_pickle", "marshal", "shelve", "dill", "joblib"}
    found = []
    for package in ("compiler", "runtime"):
        for path in sorted((REPO / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                found += [f"{path.name}: {n}" for n in names if n.split(".")[0] in banned]
    assert found == []


def test_yaml_as_deep_as_the_parser_allows_is_cached(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    deep, _ = sorted((root / "src").glob("*.prose.md"))
    nested = "[" * 99 + "1" + "]" * 99  # 100 levels with the frontmatter mapping
    deep.write_text(deep.read_text().replace("---\n", f"---\nextra: {nested}\n", 1))
    assert run(root, cache).status == "written"
    entries = orjson.loads(cache_file(root, cache, PARSE_FILE).read_bytes())["entries"]
    assert f"src/{deep.name}" in entries
    assert run(root, cache).status == "up-to-date"


# Deeper YAML used to reach the cache (and, from 600 levels, crash the parser's later
# passes with a RecursionError); the parser now refuses it with a diagnostic.
@pytest.mark.parametrize("levels", [100, 600])
def test_yaml_deeper_than_the_parser_allows_is_a_diagnostic(
    root: Path, tmp_path: Path, levels: int
) -> None:
    cache = tmp_path / "cache"
    deep, _ = sorted((root / "src").glob("*.prose.md"))
    nested = "[" * levels + "1" + "]" * levels
    deep.write_text(deep.read_text().replace("---\n", f"---\nextra: {nested}\n", 1))
    first = run(root, cache)
    codes = [d.code for d in first.diagnostics if d.severity is Severity.ERROR]
    assert codes == ["frontmatter_invalid"], first.diagnostics
    assert "nested deeper than 100 levels" in first.diagnostics[0].message
