"""The layering contracts in pyproject.toml, which `make lint` checks with import-linter,
catch what they forbid: each runs over a copy of the sources with one import added."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from .conftest import REPO

CONFIG = str(REPO / "pyproject.toml")
RUN_LINT_IMPORTS = (
    "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())"
)


@pytest.mark.parametrize(
    ("module", "source", "contract"),
    [
        (
            "runtime/late.py",
            "def f() -> None:\n    from prosec.compiler import diagnostics  # noqa: F401\n",
            "The runtime never imports the compiler",
        ),
        (
            "runtime/backends/relative.py",
            "from ...compiler.ir import Project  # noqa: F401\n",
            "The runtime never imports the compiler",
        ),
        (
            "compiler/passes/late.py",
            "def f() -> None:\n    from ..codegen import schemas  # noqa: F401\n",
            "Compiler passes never import code generation",
        ),
        (
            "runtime/prompt.py",
            "import click  # noqa: F401\n",
            "The runtime never imports click",
        ),
        (
            "runtime/renders/table.py",
            "def f() -> None:\n    from rich.table import Table  # noqa: F401\n",
            "The runtime never imports rich",
        ),
    ],
    ids=[
        "runtime-lazy-absolute",
        "runtime-relative",
        "passes-lazy-codegen",
        "runtime-click",
        "runtime-lazy-rich-submodule",
    ],
)
def test_a_forbidden_import_breaks_its_contract(
    tmp_path: Path, module: str, source: str, contract: str
) -> None:
    package = tmp_path / "src" / "prosec"
    for name in ("compiler", "runtime", "schemas"):
        shutil.copytree(REPO / name, package / name, ignore=shutil.ignore_patterns("__pycache__"))
    (package / module).write_text(source, encoding="utf-8")
    # -S: no site hook, so the editable install cannot point back at the real sources
    paths = [str(tmp_path / "src"), sysconfig.get_paths()["purelib"]]
    result = subprocess.run(
        [sys.executable, "-S", "-c", RUN_LINT_IMPORTS, "--no-cache", "--no-logo", CONFIG],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)},
    )
    assert result.returncode == 1, result.stdout + result.stderr
    broken = result.stdout.split("Broken contracts", 1)[1]
    assert contract in broken and "prosec." + module.removesuffix(".py").replace("/", ".") in broken
    assert "1 broken" in result.stdout
