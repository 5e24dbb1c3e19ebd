"""config.schema.json says everything prose.toml may hold, and every example of it builds.

Every ```toml block of the README and every key of the schema is set by some prose.toml
that a corpus project builds with; the schema's lists (codes, backends, render kinds)
are the ones the code uses.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from prosec.compiler import config
from prosec.compiler.diagnostics import CODES, code_families
from prosec.compiler.pipeline import compile_project
from prosec.runtime.config import BACKENDS, load_config
from prosec.runtime.renders import KINDS
from prosec.runtime.schemas import load_schema

from ..conftest import CORPUS, REPO, Runner

SCHEMA = load_schema("config.schema.json")
PROJECT = CORPUS / "wiring-pinned"  # its pin is the README's example pin


def readme_tomls() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^```toml\n(.*?)^```", text, flags=re.M | re.S)


def is_prose_toml(block: str) -> bool:
    """The README's editor set-up (Helix's languages.toml) is TOML but not a prose.toml."""
    return "[language-server." not in block


# prose.toml files beyond the README's, so that every key of the schema is set somewhere
MORE = [
    """\
[lint]
select = ["wiring_*", "pin_stale", "id_missing"]
strict = false
[lint.severity]
wiring_ambiguous = "info"

[run]
jobs = 1
timeout = 30.5
backend = "sqlite"

[render.capacity-plan]
kind = "replay"
dir = "recorded"
timeout = 5

[render.forecast-ml]
command = ["python3", "renders/ml.py"]
env = { LANG = "C" }

[render.forecast-manual]
kind = "agent"
command = "my-agent"
stdin = true

[cadence]
forecast-ml = "cron:0 6 * * 1-5"
capacity-plan = "P1M"
""",
]


def examples() -> list[str]:
    return [block for block in readme_tomls() if is_prose_toml(block)] + MORE


def _resolve(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    file, _, pointer = ref.partition("#")
    target: Any = load_schema(file) if file else SCHEMA
    for part in pointer.split("/")[1:]:
        target = target[part]
    return {**_resolve(target), **{k: v for k, v in schema.items() if k != "$ref"}}


def schema_keys(schema: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    """Every settable key: `lint.select`, `render.*.kind`, `wiring.pin[].need`, …"""
    schema = _resolve(schema)
    if "properties" in schema:
        for name, sub in schema["properties"].items():
            yield from schema_keys(sub, f"{prefix}.{name}" if prefix else name)
        return
    items = schema.get("items")
    if isinstance(items, Mapping) and "properties" in _resolve(items):
        yield from schema_keys(items, f"{prefix}[]")
        return
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping):
        yield from schema_keys(extra, f"{prefix}.*")
        return
    yield prefix


def keys_set(data: Any, schema: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    """The keys of `schema_keys` that the document `data` sets."""
    schema = _resolve(schema)
    if "properties" in schema and isinstance(data, Mapping):
        for name, value in data.items():
            sub = schema["properties"][name]
            yield from keys_set(value, sub, f"{prefix}.{name}" if prefix else name)
        return
    items = schema.get("items")
    if isinstance(items, Mapping) and "properties" in _resolve(items) and isinstance(data, list):
        for item in data:
            yield from keys_set(item, items, f"{prefix}[]")
        return
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping) and isinstance(data, Mapping):
        for value in data.values():
            yield from keys_set(value, extra, f"{prefix}.*")
        return
    yield prefix


def test_every_key_of_the_schema_is_set_by_an_example() -> None:
    every = set(schema_keys(SCHEMA))
    assert {"lint.severity.*", "wiring.pin[].facet", "render.*.stdin", "cadence.*"} <= every
    covered = {key for text in examples() for key in keys_set(tomllib.loads(text), SCHEMA)}
    assert sorted(every - covered) == []


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(PROJECT, root)
    return root


@pytest.mark.parametrize("index", range(len(examples())))
def test_every_example_is_accepted_by_the_compiler_and_the_runtime(
    project: Path, index: int
) -> None:
    (project / "prose.toml").write_text(examples()[index], encoding="utf-8")
    settings = config.load(project).with_overrides(offline_tools=True)
    result = compile_project(project, settings)
    assert result.intent is not None and not result.has_errors, result.diagnostics
    load_config(project)  # the runtime reads the same file without complaint


@pytest.mark.parametrize("index", range(len(readme_tomls()) + len(MORE)))
def test_every_toml_example_builds(project: Path, index: int, run_prosec: Runner) -> None:
    block = [*readme_tomls(), *MORE][index]
    (project / "prose.toml").write_text(block, encoding="utf-8")
    # every command that reads the whole prose.toml (issue 9: a README example made
    # build, graph and explain exit 3)
    for command in (("build", project), ("graph", project), ("explain", "capacity-plan", project)):
        result = run_prosec(*command)
        if is_prose_toml(block):
            assert result.returncode == 0, (command, result.stderr)
        else:  # the editor's languages.toml, pasted into prose.toml by mistake
            assert result.returncode == 2, (command, result.stderr)
            assert "prose.toml:1: language-server: unknown key" in result.stderr


def test_the_readme_shows_every_table() -> None:
    shown = {
        table for block in readme_tomls() if is_prose_toml(block) for table in tomllib.loads(block)
    }
    assert shown == set(SCHEMA["properties"])


def test_code_lists_are_the_diagnostics_table() -> None:
    defs = SCHEMA["$defs"]
    expected = {
        "code": sorted(CODES),
        "code_family": list(code_families()),
    }
    actual = {name: defs[name]["enum"] for name in expected}
    # after adding a code to compiler/diagnostics.py, paste this into schemas/config.schema.json
    assert actual == expected, json.dumps(expected, indent=2)


def test_backends_and_render_kinds_are_the_runtimes() -> None:
    properties = SCHEMA["properties"]
    assert properties["run"]["properties"]["backend"]["enum"] == list(BACKENDS)
    render = properties["render"]["additionalProperties"]["properties"]
    assert render["kind"]["enum"] == list(KINDS)


def test_family_prefixes_end_at_an_underscore() -> None:
    families = code_families()
    assert {"*", "wiring_*", "prosescript_count_*"} <= set(families)
    assert "wiring_un*" not in families and "wiring*" not in families
