"""The upstream standard library as a dependency: a clone of the local upstream checkout
(published to a bare repository) reached as `std/…` and `co/…` through the [deps] map.

Every `std/` and `co/` file resolves from the one clone and is read into the project;
whether each one also builds on its own is the compatibility issue's business, so the
count of files with errors is reported, not pinned."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ...conftest import Runner
from .repos import Mirror

pytestmark = pytest.mark.conformance


def test_every_std_and_co_file_resolves_from_one_clone(
    upstream: Path, tmp_path: Path, run_prosec: Runner
) -> None:
    work = tmp_path / "work" / "openprose" / "prose"
    shutil.copytree(upstream, work, ignore=shutil.ignore_patterns(".git"))
    files = {
        p.relative_to(work).as_posix(): p.read_bytes()
        for p in sorted(work.rglob("*"))
        if p.is_file()
    }
    shutil.rmtree(tmp_path / "work")
    Mirror(tmp_path / "mirror", tmp_path / "work").publish("openprose/prose", files)
    packages = sorted(
        p.relative_to(upstream / "packages").as_posix().removesuffix(".prose.md")
        for package in ("std", "co")
        for p in (upstream / "packages" / package).rglob("*.prose.md")
    )
    identifiers = [p.removesuffix("/index") for p in packages]
    assert len(identifiers) >= 60
    uses = "".join(f'use "{name}" as dep{i}\n' for i, name in enumerate(identifiers))
    root = tmp_path / "app"
    (root / "src").mkdir(parents=True)
    (root / "prose.toml").write_text('[deps]\n"github.com/openprose" = "../mirror/openprose"\n')
    main = (
        "---\nname: everything\nkind: function\n---\n\n# Everything\n\n### Parameters\n\n"
        "- `x`: x\n\n### Returns\n\n- `y`: y\n\n### Execution\n\n```prose\n"
        f"{uses}\nlet y = call dep0\n  x: x\nreturn y\n```\n"
    )
    (root / "src" / "everything.prose.md").write_text(main, encoding="utf-8")
    (root / "src" / "other.prose.md").write_text(main.replace("everything", "other"), "utf-8")

    install = run_prosec("install", cwd=root, timeout=600)
    assert install.returncode == 0, install.stderr
    assert list((root / "deps").iterdir()) == [root / "deps" / "github.com"]
    lint = run_prosec("lint", "--format", "json", ".", cwd=root, timeout=600)
    records = json.loads(lint.stdout)
    unresolved = [r for r in records if r["code"].startswith("dependency_")]
    assert unresolved == []
    # the project's lint rules do not run on dependency files: only their parse errors
    # (and the build's) would show here
    failing = sorted({r["path"] for r in records if r["severity"] == "error"})
    print(f"\n{len(identifiers)} std/ and co/ files resolve; {len(failing)} with errors")
    print("\n".join(failing))
    assert lint.returncode == (1 if failing else 0)
