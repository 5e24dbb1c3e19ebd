"""Provenance: a run's sources/ and root.prose.md are the sources as compiled, checked by
digest; a source edited after `activate` is reported and not used."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import CORPUS
from .project import PROSEC

KEEPER = "src/lighthouse-keeper.prose.md"


def prosec(root: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("OPENPROSE_", "PROSEC_CRASH"))}
    full.update(env)
    return subprocess.run(
        [str(PROSEC), *args], cwd=root, env=full, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "lighthouse-watch"
    shutil.copytree(CORPUS / "lighthouse-watch", root)
    (root / "r.py").write_text(
        "import json, os, pathlib\n"
        "out = pathlib.Path(os.environ['PROSEC_OUTPUT'])\n"
        "(out / 'watches.json').write_text('1')\n"
        "(out / 'seen.json').write_text(json.dumps(pathlib.Path(os.environ['PROSEC_CONTRACT'])"
        ".read_text().count('Lighthouse keeper')))\n"
    )
    (root / "prose.toml").write_text(
        f'[render.default]\nkind = "command"\ncommand = ["{sys.executable}", "r.py"]\n'
    )
    env = {"PROSEC_CACHE_DIR": str(tmp_path / "cache")}
    for command in ("build", "activate"):
        result = prosec(root, command, env=env)
        assert result.returncode == 0, result.stderr
    return root, env


def test_the_build_snapshots_every_source_by_digest(project: tuple[Path, dict[str, str]]) -> None:
    root, _ = project
    listed = json.loads((root / "dist/sources.active.json").read_text())
    manifest = (root / "dist/manifest.active.json").read_bytes()
    assert listed["manifest"] == "sha256:" + hashlib.sha256(manifest).hexdigest()
    compiled = sorted(p.relative_to(root).as_posix() for p in (root / "src").glob("*.prose.md"))
    assert KEEPER in compiled and sorted(listed["sources"]) == compiled
    for path, digest in listed["sources"].items():
        blob = root / "dist/sources" / digest.removeprefix("sha256:")
        assert blob.read_bytes() == (root / path).read_bytes()
    assert (root / "dist/sources.next.json").read_bytes() == (
        root / "dist/sources.active.json"
    ).read_bytes()


def test_a_source_edited_after_activate_is_reported_and_not_used(
    project: tuple[Path, dict[str, str]],
) -> None:
    root, env = project
    compiled = (root / KEEPER).read_text()
    (root / KEEPER).write_text(
        compiled.replace("# Lighthouse keeper", "# Lighthouse keeper, edited")
    )
    result = prosec(root, "run", ".", "--json", env=env)
    assert result.returncode == 0, result.stderr
    assert f"{root / KEEPER} changed after it was compiled" in result.stderr
    assert "this run uses the source as compiled" in result.stderr
    run = root / "runs" / json.loads(result.stdout)["run_id"]
    assert (run / "sources" / KEEPER).read_text() == compiled
    assert json.loads((run / "run.json").read_text())["sources_edited"] == [KEEPER]
    # the render read the contract as compiled, not the edit
    seen = root / "state/world-model/lighthouse-keeper/published/seen.json"
    assert json.loads(seen.read_text()) == 1
    assert "edited" not in (run / "sources" / KEEPER).read_text()
    # once built and activated again, the edit is what runs, and nothing is reported
    for command in ("build", "activate"):
        assert prosec(root, command, env=env).returncode == 0
    again = prosec(root, "run", ".", "--json", env=env)
    assert "changed after it was compiled" not in again.stderr
    run = root / "runs" / json.loads(again.stdout)["run_id"]
    assert "edited" in (run / "sources" / KEEPER).read_text()


def test_an_unchanged_tree_runs_without_a_report_and_a_lost_store_is_refused(
    project: tuple[Path, dict[str, str]],
) -> None:
    root, env = project
    clean = prosec(root, "run", ".", env=env)
    assert clean.returncode == 0 and "changed after it was compiled" not in clean.stderr
    listed = json.loads((root / "dist/sources.active.json").read_text())
    blob = root / "dist/sources" / listed["sources"][KEEPER].removeprefix("sha256:")
    blob.unlink()
    # the working file still has the compiled digest: it is the same text, so it is used
    assert prosec(root, "tick", "lighthouse-keeper", env=env).returncode == 0
    (root / KEEPER).write_text("---\nname: lighthouse-keeper\n---\n")
    lost = prosec(root, "tick", "lighthouse-keeper", env=env)
    assert lost.returncode == 2, lost.stderr
    assert f"{KEEPER}: the source as compiled is gone" in lost.stderr
    assert "Traceback" not in lost.stderr


def test_a_manifest_without_its_list_runs_the_working_files(
    project: tuple[Path, dict[str, str]],
) -> None:
    root, env = project
    (root / "dist/sources.active.json").write_text('{"manifest": "sha256:other", "sources": {}}')
    (root / KEEPER).write_text((root / KEEPER).read_text() + "\nAn edit.\n")
    result = prosec(root, "run", ".", "--json", env=env)
    assert result.returncode == 0, result.stderr
    run = root / "runs" / json.loads(result.stdout)["run_id"]
    assert (run / "sources" / KEEPER).read_text().endswith("An edit.\n")


def test_a_rebuild_after_losing_the_store_writes_it_again(
    project: tuple[Path, dict[str, str]],
) -> None:
    root, env = project
    shutil.rmtree(root / "dist/sources")
    assert prosec(root, "build", env=env).returncode == 0
    listed = json.loads((root / "dist/sources.next.json").read_text())
    for digest in listed["sources"].values():
        assert (root / "dist/sources" / digest.removeprefix("sha256:")).is_file()


def test_a_rebuild_takes_listed_blobs_as_they_are_but_rewrites_a_truncated_one(
    project: tuple[Path, dict[str, str]],
) -> None:
    """A blob the last list names is not read again when it is a regular file of its
    text's size (a run checks its digest); a truncated one is written again."""
    root, env = project
    listed = json.loads((root / "dist/sources.next.json").read_text())
    blob = root / "dist/sources" / listed["sources"][KEEPER].removeprefix("sha256:")
    blob.write_bytes(blob.read_bytes()[:-1])
    other = next(p for p in sorted((root / "src").glob("*.prose.md")) if f"src/{p.name}" != KEEPER)
    other.write_text(other.read_text() + "\nMore.\n")  # not a no-op build
    assert prosec(root, "build", env=env).returncode == 0
    assert blob.read_bytes() == (root / KEEPER).read_bytes()


def test_old_blobs_are_pruned_when_no_list_names_them(project: tuple[Path, dict[str, str]]) -> None:
    root, env = project
    before = set(os.listdir(root / "dist/sources"))
    (root / KEEPER).write_text((root / KEEPER).read_text() + "\nOne.\n")
    assert prosec(root, "build", env=env).returncode == 0
    assert prosec(root, "activate", env=env).returncode == 0
    (root / KEEPER).write_text((root / KEEPER).read_text() + "\nTwo.\n")
    assert prosec(root, "build", env=env).returncode == 0
    after = set(os.listdir(root / "dist/sources"))
    # the next and the active list's sources are kept (each file once, the keeper twice);
    # the first build's keeper is gone
    files = len(list((root / "src").glob("*.prose.md")))
    assert len(before) == files and len(after) == files + 1 and len(before - after) == 1


@pytest.mark.parametrize("blocker", ["store-is-a-file", "blob-is-a-folder", "blob-is-a-link"])
def test_a_build_replaces_whatever_took_the_stores_place(
    project: tuple[Path, dict[str, str]], blocker: str
) -> None:
    root, env = project
    listed = json.loads((root / "dist/sources.next.json").read_text())
    blob = root / "dist/sources" / listed["sources"][KEEPER].removeprefix("sha256:")
    if blocker == "store-is-a-file":
        shutil.rmtree(root / "dist/sources")
        (root / "dist/sources").write_text("not a store")
    elif blocker == "blob-is-a-folder":
        blob.unlink()
        blob.mkdir()
    else:
        blob.unlink()
        (root / "elsewhere.md").write_text("not the source")
        blob.symlink_to(root / "elsewhere.md")
    result = prosec(root, "build", "--no-cache", env=env)
    assert result.returncode == 0, result.stderr
    assert blob.is_file() and not blob.is_symlink()
    assert blob.read_bytes() == (root / KEEPER).read_bytes()


def test_activate_replaces_a_folder_in_place_of_the_active_list(
    project: tuple[Path, dict[str, str]],
) -> None:
    root, env = project
    (root / "dist/sources.active.json").unlink()
    (root / "dist/sources.active.json").mkdir()
    result = prosec(root, "activate", env=env)
    assert result.returncode == 0, result.stderr
    assert (root / "dist/sources.active.json").read_bytes() == (
        root / "dist/sources.next.json"
    ).read_bytes()
