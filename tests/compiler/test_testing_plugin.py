"""The shipped pytest plugin, used the way the README says, in a fresh pytest process."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from prosec.compiler.testing import PluginError, resolve_root

from ..conftest import CORPUS, Runner

EXAMPLE = """
def test_compiled_intent(prosec_compile, prosec_snapshot):
    assert prosec_compile("src") == prosec_snapshot


def test_errors_fail_with_their_diagnostics(prosec_compile):
    prosec_compile("broken")
"""


def run_pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(root),
            *args,
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow  # four pytest processes
def test_snapshot_workflow(tmp_path: Path) -> None:
    shutil.copytree(CORPUS / "wiring-diamond" / "src", tmp_path / "src")
    shutil.copytree(CORPUS / "wiring-cycle" / "src", tmp_path / "broken" / "src")
    (tmp_path / "test_intent.py").write_text(EXAMPLE)
    created = run_pytest(tmp_path, "--snapshot-update", "test_intent.py::test_compiled_intent")
    assert created.returncode == 0, created.stdout + created.stderr
    snapshots = list((tmp_path / "__snapshots__").rglob("*.json"))
    assert len(snapshots) == 1
    assert '"kind": "openprose.compile-phase-ir"' in snapshots[0].read_text()
    assert run_pytest(tmp_path, "test_intent.py::test_compiled_intent").returncode == 0
    fulfillment = tmp_path / "src" / "fulfillment.prose.md"
    fulfillment.write_text(fulfillment.read_text().replace("paid, reserved", "reserved"))
    changed = run_pytest(tmp_path, "test_intent.py::test_compiled_intent")
    assert changed.returncode == 1
    errors = run_pytest(tmp_path, "test_intent.py::test_errors_fail_with_their_diagnostics")
    assert errors.returncode == 1
    assert "wiring_cycle" in errors.stdout


# --- where `prosec_compile(path)` looks (issue 15: a missing `src` compiled an empty folder)


def test_a_missing_path_is_an_error_naming_the_resolved_path(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    with pytest.raises(PluginError) as raised:
        resolve_root("src", tests, "the test file's directory (test_x.py)")
    assert str(raised.value) == (
        f"prosec_compile: {tests / 'src'} does not exist "
        "('src' from the test file's directory (test_x.py))"
    )


def test_a_folder_that_is_no_project_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.prose.md").write_text("---\nname: n\nkind: function\n---\n")
    with pytest.raises(PluginError, match="is not an OpenProse project"):
        resolve_root(tmp_path, Path("/"))
    # a `src` with no project around it is no project either (its parent is tmp_path)
    (tmp_path / "src").mkdir()
    assert resolve_root(tmp_path / "src", Path("/")) == tmp_path
    assert resolve_root(tmp_path, Path("/")) == tmp_path


def test_a_project_is_its_folder_its_src_or_a_folder_with_prose_toml(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    assert resolve_root("../proj/src", tmp_path / "tests") == project
    assert resolve_root("proj", tmp_path) == project
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "prose.toml").write_text("")
    assert resolve_root("flat", tmp_path) == tmp_path / "flat"
    # a project whose sources sit in src/src: `src` is the project itself
    (project / "src" / "src").mkdir()
    assert resolve_root(project / "src", tmp_path) == project / "src"


PROJECT_TESTS = """
def test_from_the_test_file(prosec_compile):
    assert prosec_compile("../src")["kind"] == "openprose.compile-phase-ir"


def test_src_beside_the_test_file_is_missing(prosec_compile):
    prosec_compile("src")
"""


@pytest.mark.slow  # three pytest processes
def test_paths_resolve_from_the_test_file_or_prosec_root(tmp_path: Path) -> None:
    shutil.copytree(CORPUS / "wiring-diamond" / "src", tmp_path / "src")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_paths.py").write_text(PROJECT_TESTS)
    # the rootdir is tests/, as when pytest runs from there: paths still start at the file
    result = run_pytest(tests, "-rA")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "PASSED test_paths.py::test_from_the_test_file" in result.stdout
    assert f"prosec_compile: {tests / 'src'} does not exist ('src' from the test file's" in (
        result.stdout
    )
    # the ini option names the directory relative paths start at
    (tmp_path / "pytest.ini").write_text("[pytest]\nprosec_root = .\n")
    (tests / "test_ini.py").write_text(
        "def test_ini(prosec_compile):\n    assert prosec_compile('src')['topology']['nodes']\n"
    )
    ini = run_pytest(tmp_path, "tests/test_ini.py")
    assert ini.returncode == 0, ini.stdout + ini.stderr


@pytest.mark.slow  # a pytest process compiling from a folder that is no project
def test_a_compile_outside_a_project_refuses(tmp_path: Path) -> None:
    (tmp_path / "test_outside.py").write_text(
        "def test_outside(prosec_compile):\n    prosec_compile('.')\n"
    )
    result = run_pytest(tmp_path)
    assert result.returncode == 1
    assert f"prosec_compile: {tmp_path} is not an OpenProse project" in result.stdout


# --- snapshot failures that explain themselves


SNAPSHOT_TEST = """
def test_intent(prosec_compile, prosec_snapshot):
    assert prosec_compile("..") == prosec_snapshot
"""


@pytest.mark.slow  # three pytest processes and a build
def test_a_snapshot_failure_names_the_moved_edge_first(
    tmp_path: Path, run_prosec: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROSEC_CACHE_DIR", str(tmp_path / "cache"))
    project = tmp_path / "project"
    shutil.copytree(CORPUS / "wiring-facets", project)
    (project / "tests").mkdir()
    (project / "tests" / "test_intent.py").write_text(SNAPSHOT_TEST)
    created = run_pytest(project, "--snapshot-update", "tests")
    assert created.returncode == 0, created.stdout + created.stderr
    # the snapshot file is the manifest `prosec build` writes, byte for byte
    assert run_prosec("build", "--offline-tools", cwd=project).returncode == 0
    (snapshot,) = (project / "tests" / "__snapshots__").rglob("*.json")
    assert snapshot.read_bytes() == (project / "dist" / "manifest.next.json").read_bytes()
    # one edge moves: the hedger now subscribes to the board's rates, not its fx
    hedger = project / "src" / "fx-hedger.prose.md"
    hedger.write_text(hedger.read_text().replace("#### fx\n", "#### rates\n"))
    changed = run_pytest(project, "tests")  # without -vv: pytest truncates the explanation
    assert changed.returncode == 1
    lines = [line.removeprefix("E").strip() for line in changed.stdout.splitlines()]
    start = lines.index(
        "compiled intent changed: edges 1 added, 1 removed; contract fingerprints 1 changed"
    )
    assert lines[start + 1 : start + 6] == [
        "edges:",
        "+ price-board.rates → fx-hedger",
        "- price-board.fx → fx-hedger",
        "contract fingerprints:",
        lines[start + 5],
    ]
    assert lines[start + 5].startswith("~ fx-hedger: sha256:")
