"""`prosec lint` names a legacy `.prose` program (seed 000) as one, with the command that
migrates it, instead of reporting Contract Markdown it never had."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..conftest import CORPUS

PROSEC = Path(sys.executable).parent / "prosec"
LEGACY = Path(__file__).resolve().parents[1] / "data" / "legacy" / "tides"


def lint(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PROSEC), "lint", "--format", "json", *args],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_legacy_file_is_a_legacy_program_warning(tmp_path: Path) -> None:
    shutil.copy(CORPUS / "invalid/legacy_program/lamp-check.prose", tmp_path)
    result = lint(tmp_path, "lamp-check.prose")
    assert result.returncode == 0, result.stderr  # a warning: nothing is broken yet
    (found,) = json.loads(result.stdout)
    assert (found["code"], found["severity"], found["line"]) == ("legacy_program", "warning", 1)
    assert "prosec upgrade lamp-check.prose" in found["message"]
    assert "frontmatter" not in result.stdout


def test_a_folder_walk_finds_legacy_programs_but_not_run_copies(tmp_path: Path) -> None:
    shutil.copytree(LEGACY, tmp_path / "tides")
    (tmp_path / "tides/src").mkdir()
    (tmp_path / "tides/src/ok.prose.md").write_text(
        "---\nname: ok\nkind: function\n---\n\n# Ok\n\n### Returns\n\n- `x`: a value\n"
    )
    result = lint(tmp_path / "tides", ".")
    assert result.returncode == 0, result.stderr
    paths = [(d["code"], d["path"]) for d in json.loads(result.stdout)]
    # .prose/runs/*/program.prose are a run's copies, not sources: not reported
    assert paths == [("legacy_program", "tides.prose")]
    strict = lint(tmp_path / "tides", "--select", "legacy_program", "--strict", ".")
    assert strict.returncode in (0, 1) and "Traceback" not in strict.stderr


def prosec(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROSEC_CACHE_DIR": str(where.parent / "cache")}
    return subprocess.run(
        [str(PROSEC), *args], cwd=where, capture_output=True, text=True, timeout=60, env=env
    )


def test_build_reports_a_legacy_program_as_lint_does(tmp_path: Path) -> None:
    """`prosec build` of a project holding a `.prose` program never drops it silently:
    the same `legacy_program` warning as `prosec lint`, on its file and line, naming
    `prosec upgrade`, cold and from the build cache; once upgraded it compiles."""
    project = tmp_path / "lamp"
    shutil.copytree(CORPUS / "invalid/legacy_program", project)
    linted = [d for d in json.loads(prosec(project, "lint", "--format", "json", ".").stdout)]
    expected = [(d["code"], d["path"], d["line"], d["message"]) for d in linted]
    assert [e[:3] for e in expected] == [("legacy_program", "lamp-check.prose", 1)]
    for attempt in ("cold", "cached"):
        built = prosec(project, "build", "--format", "json")
        assert built.returncode == 0, (attempt, built.stderr)  # a warning, as in lint
        found = [
            (d["code"], d["path"], d["line"], d["message"])
            for d in json.loads(built.stdout)
            if d["code"] == "legacy_program"
        ]
        assert found == expected, attempt
        assert "prosec upgrade lamp-check.prose" in found[0][3]
    assert prosec(project, "upgrade", "lamp-check.prose").returncode == 0
    built = prosec(project, "build", "--format", "json")
    assert built.returncode == 0, built.stderr
    assert "legacy_program" not in built.stdout
    manifest = json.loads((project / "dist/manifest.next.json").read_text())
    assert [s["path"] for s in manifest["sources"]] == ["lamp-check.prose.md"]
