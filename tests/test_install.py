"""A base install (`pip install .`, no extras) in a fresh virtualenv: it brings only the
base dependencies, runs the demo on the filesystem and SQLite backends, and each feature
whose extra is missing fails with the exact install command."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import CORPUS, REPO

pytestmark = pytest.mark.slow

BASE = {
    "click",
    "markdown-it-py",
    "pyyaml",
    "lark",
    "jsonschema",
    "referencing",
    "networkx",
    "orjson",
    "pathspec",
    "rich",
    "platformdirs",
    "croniter",
}
# what the extras and the test tools bring: none of it may come with the base install
EXTRAS = {
    "pygls",
    "lsprotocol",
    "psycopg",
    "psycopg-binary",
    "procrastinate",
    "pytest",
    "syrupy",
    "hypothesis",
    "pytest-xdist",
    "mypy",
    "ruff",
    "rfc8785",
    "pgserver",
    "deptry",
    "import-linter",
    "starlette",
    "uvicorn",
    "httpx",
    "playwright",
}
SOURCES = ("pyproject.toml", "README.md", "compiler", "runtime", "schemas")


def _run(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a command outside this test run's virtualenv."""
    clean = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**clean, **(env or {})},
    )


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv holding `pip install .` of a copy of this checkout, nothing else."""
    scratch = tmp_path_factory.mktemp("install")
    source = scratch / "prosec"
    source.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
            shutil.copytree(REPO / name, source / name, ignore=ignore)
        else:
            shutil.copy2(REPO / name, source / name)
    venv = scratch / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [venv / "bin" / "python", "-m", "pip", "--disable-pip-version-check"]
    installed = _run(*pip, "install", "--quiet", source)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return venv


def _distributions(venv: Path) -> set[str]:
    listed = _run(venv / "bin" / "python", "-m", "pip", "list", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    return {re.sub(r"[-_.]+", "-", d["name"]).lower() for d in json.loads(listed.stdout)}


def test_the_base_install_brings_only_the_base_dependencies(venv: Path) -> None:
    names = _distributions(venv)
    assert "prosec" in names
    assert names >= BASE, BASE - names
    assert not names & EXTRAS, names & EXTRAS


def test_the_demo_runs_on_the_base_install(venv: Path, tmp_path: Path) -> None:
    prosec = venv / "bin" / "prosec"
    # The demo script itself: it lints the corpus (the deliberately failing examples
    # excluded) and then runs the newsroom end to end with the installed command.
    demo = _run("bash", CORPUS / "demo.sh", env={"PROSEC": str(prosec)})
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "every hash recomputes" in demo.stdout


def _built_newsroom(venv: Path, root: Path) -> Path:
    shutil.copytree(CORPUS / "newsroom", root, ignore=shutil.ignore_patterns("dist", "runs"))
    for args in (("build", "--offline-tools"), ("activate",)):
        result = _run(venv / "bin" / "prosec", *args, cwd=root)
        assert result.returncode == 0, result.stdout + result.stderr
    return root


def test_sqlite_runs_and_postgres_names_its_extra(venv: Path, tmp_path: Path) -> None:
    root = _built_newsroom(venv, tmp_path / "newsroom")
    prosec = venv / "bin" / "prosec"
    sqlite = _run(prosec, "run", "--backend", "sqlite", "--input", "audience=editors", cwd=root)
    assert sqlite.returncode == 0, sqlite.stdout + sqlite.stderr
    assert (root / "state" / "prosec.db").is_file()
    postgres = _run(prosec, "run", "--backend", "postgres", cwd=root)
    assert postgres.returncode == 2, postgres.stdout + postgres.stderr
    assert postgres.stderr == (
        "prosec: error: the PostgreSQL backend needs the 'postgres' extra: "
        "pip install 'prosec[postgres]'\n"
    )


def test_lsp_names_its_extra(venv: Path) -> None:
    result = _run(venv / "bin" / "prosec", "lsp")
    assert result.returncode == 2
    assert result.stderr == (
        "prosec: error: the language server needs the 'lsp' extra: pip install 'prosec[lsp]'\n"
    )


def test_serve_and_devtools_name_their_extra(venv: Path, tmp_path: Path) -> None:
    root = _built_newsroom(venv, tmp_path / "newsroom")
    for command in ("serve", "devtools"):
        result = _run(venv / "bin" / "prosec", command, ".", cwd=root)
        assert result.returncode == 2, result.stdout + result.stderr
        assert result.stderr == (
            "prosec: error: prosec serve and prosec devtools need the 'serve' extra: "
            "pip install 'prosec[serve]'\n"
        )
    # the devtools page ships in the package (no CDN, no build step)
    probe = "import importlib.resources as r; s = r.files('prosec.runtime.devtools') / 'static'; "
    probe += "print(sorted(p.name for p in s.iterdir()))"
    shipped = _run(venv / "bin" / "python", "-c", probe)
    assert shipped.stdout.strip() == "['app.css', 'app.js', 'index.html']", shipped.stderr


PLUGIN_TESTS = """
def test_compile(prosec_compile):
    assert prosec_compile("src")["kind"] == "openprose.compile-phase-ir"


def test_snapshot(prosec_compile, prosec_snapshot):
    assert prosec_compile("src") == prosec_snapshot
"""


def test_the_pytest_plugin_loads_without_syrupy(venv: Path, tmp_path: Path) -> None:
    python = venv / "bin" / "python"
    added = _run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "pytest")
    assert added.returncode == 0, added.stdout + added.stderr
    assert "syrupy" not in _distributions(venv)
    shutil.copytree(CORPUS / "wiring-diamond" / "src", tmp_path / "src")
    (tmp_path / "test_intent.py").write_text(PLUGIN_TESTS)
    result = _run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=tmp_path)
    # the plugin loaded: prosec_compile works, and only the snapshot fixture errors
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 passed, 1 error" in result.stdout
    assert (
        "prosec_snapshot needs syrupy, from the 'pytest' extra: pip install 'prosec[pytest]'"
        in result.stdout
    )
