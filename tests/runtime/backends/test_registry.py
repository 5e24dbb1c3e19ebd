"""The backend registry is the one list of backend names: prose.toml's schema, the
runtime config and the stores agree with it, and choosing a store imports only that store
(psycopg only for postgres). The CLI's `--backend` choices: tests/compiler/commands."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prosec.runtime.backends import (
    BACKEND_NAMES,
    DEFAULT_BACKEND,
    REGISTRY,
    BackendError,
    open_backend,
)
from prosec.runtime.config import BACKENDS, RunConfig
from prosec.runtime.schemas import load_schema


def backend_enums(node: Any) -> Iterator[list[Any]]:
    """Every `backend` property's enum anywhere in a schema."""
    if isinstance(node, dict):
        backend = node.get("properties", {}).get("backend")
        if isinstance(backend, dict) and "enum" in backend:
            yield backend["enum"]
        for value in node.values():
            yield from backend_enums(value)
    elif isinstance(node, list):
        for value in node:
            yield from backend_enums(value)


def test_the_config_schema_enum_is_the_registry() -> None:
    enums = list(backend_enums(load_schema("config.schema.json")))
    assert enums, "config.schema.json lists no backend enum"
    assert all(enum == list(BACKEND_NAMES) for enum in enums)


def test_config_and_defaults_use_the_registry() -> None:
    assert BACKENDS == BACKEND_NAMES == tuple(REGISTRY)
    assert RunConfig().backend == DEFAULT_BACKEND in BACKEND_NAMES


def test_an_unknown_backend_names_the_choices(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match=r"redis.*filesystem, sqlite, postgres, in-context"):
        open_backend("redis", tmp_path)


def test_psycopg_is_imported_only_for_postgres(tmp_path: Path) -> None:
    code = (
        "import sys; from pathlib import Path\n"
        "import prosec.compiler.commands.run, prosec.compiler.commands.status\n"
        "import prosec.compiler.commands.receipts\n"
        "import prosec.runtime.session, prosec.runtime.config\n"
        "from prosec.runtime.backends import BACKEND_NAMES, open_backend\n"
        "root = Path(sys.argv[1])\n"
        "for name in BACKEND_NAMES:\n"
        "    if name != 'postgres':\n"
        "        open_backend(name, root).close()\n"
        "print('psycopg' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"
