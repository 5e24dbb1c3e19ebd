"""The packaged JSON Schemas: shipped as package data, well-formed, and used."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from importlib import resources

import jsonschema
import pytest
from prosec.compiler.codegen.schemas import SCHEMA_NAMES, problems, schema

from ..conftest import CORPUS, REPO


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schema_is_packaged_and_draft_2020_12(name: str) -> None:
    entry = resources.files("prosec.schemas") / f"{name}.schema.json"
    document = json.loads(entry.read_text(encoding="utf-8"))
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert document["$id"].endswith(f"/{name}.schema.json")
    jsonschema.Draft202012Validator.check_schema(document)
    assert schema(name) == document


def test_wheel_metadata_ships_the_schemas() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "*.schema.json" in pyproject["tool"]["setuptools"]["package-data"]["prosec.schemas"]
    assert pyproject["project"]["entry-points"]["pytest11"]["prosec"] == "prosec.compiler.testing"


def test_every_corpus_prose_toml_fits_the_config_schema() -> None:
    bad = CORPUS / "invalid" / "config_invalid" / "prose.toml"  # config_invalid's example
    tomls = sorted(CORPUS.rglob("prose.toml"))
    assert bad in tomls
    for path in tomls:
        found = problems("config", tomllib.loads(path.read_text()))
        assert (found != []) == (path == bad), path


def test_config_schema_rejects_a_misspelled_key() -> None:
    assert problems("config", {"wiring": {"pins": []}})


def test_lint_imports_neither_networkx_nor_jsonschema() -> None:
    code = (
        "import sys\n"
        "from prosec.compiler.cli import main\n"
        "try:\n"
        "    main(['lint', '-q', sys.argv[1]])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = [m for m in ('networkx', 'jsonschema', 'rich') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(CORPUS / "wiring-diamond")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.strip().splitlines()[-1:] in ([""], [])
