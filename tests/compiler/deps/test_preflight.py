"""`prosec preflight [PATH]`: pass / fail per check, exit 0 / 1, and no value ever printed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ...conftest import Runner
from .repos import Mirror, contract
from .test_install import HOST, app, function

SECRET = "s3cr3t-value-never-shown"


def with_environment(root: Path) -> Path:
    body = (
        "### Maintains\n\n- `report`: the report\n\n### Environment\n\n"
        "- `PREFLIGHT_TOKEN`: the API token\n- `PREFLIGHT_WEBHOOK`: optional, where to post\n"
    )
    path = root / "src" / "reporter.prose.md"
    path.write_text(contract("reporter", "responsibility", body, id="0RP6T3H8W5N2Q7R9M4X1B6V3ZA"))
    return path


def test_environment_presence_only(tmp_path: Path, run_prosec: Runner) -> None:
    root = app(tmp_path / "app")
    with_environment(root)
    assert "PREFLIGHT_TOKEN" not in os.environ
    unset = run_prosec("preflight", root)
    lines = unset.stdout.splitlines()
    assert unset.returncode == 1
    assert (
        "fail  environment PREFLIGHT_TOKEN: not set (declared by reporter, "
        "src/reporter.prose.md:15)" in lines
    )
    assert lines[-1] == "preflight: fail (1 problem)"
    assert any(
        line.startswith("pass  environment PREFLIGHT_WEBHOOK: not set, optional") for line in lines
    )
    # an empty value is still a set variable: presence is all that is checked
    assert run_prosec("preflight", root, env={"PREFLIGHT_TOKEN": ""}).returncode == 0
    ok = run_prosec("preflight", root, env={"PREFLIGHT_TOKEN": SECRET, "PREFLIGHT_WEBHOOK": SECRET})
    assert ok.returncode == 0
    assert "pass  environment PREFLIGHT_TOKEN: set" in ok.stdout
    assert ok.stdout.splitlines()[-1] == "preflight: pass"
    assert SECRET not in ok.stdout + ok.stderr


def test_one_file_and_its_references(tmp_path: Path, run_prosec: Runner) -> None:
    mirror = Mirror(tmp_path / "mirror")
    mirror.publish("acme/lib", {"price.prose.md": function("price")})
    root = app(tmp_path / "app", f"{HOST}/acme/lib/price")
    reporter = with_environment(root)
    env = {"PREFLIGHT_TOKEN": SECRET}
    one = run_prosec("preflight", root / "src" / "main.prose.md", env=env)
    assert one.returncode == 1  # not installed yet
    assert (
        f"fail  dependency {HOST}/acme/lib: not in prose.lock; run `prosec install`" in one.stdout
    )
    assert "PREFLIGHT_TOKEN" not in one.stdout  # another file's variable
    assert run_prosec("install", cwd=root).returncode == 0
    assert run_prosec("preflight", root / "src" / "main.prose.md").returncode == 0
    assert run_prosec("preflight", reporter, env=env).returncode == 0
    (root / "src" / "main.prose.md").write_text(function("main", ("acme/lib/price",)), "utf-8")
    bare = run_prosec("preflight", root, env=env)
    assert bare.returncode == 1
    assert "fail  reference src/main.prose.md:" in bare.stdout
    assert "reserved for the OpenProse registry" in bare.stdout


def test_a_lock_without_deps(tmp_path: Path, run_prosec: Runner) -> None:
    Mirror(tmp_path / "mirror").publish("acme/lib", {"price.prose.md": function("price")})
    root = app(tmp_path / "app", f"{HOST}/acme/lib/price")
    assert run_prosec("install", cwd=root).returncode == 0
    shutil.rmtree(root / "deps")
    result = run_prosec("preflight", cwd=root)
    assert result.returncode == 1
    assert (
        f"fail  dependency {HOST}/acme/lib: not installed (deps/{HOST}/acme/lib/ is missing); "
        "run `prosec install`" in result.stdout
    )


def test_bad_paths_exit_two(tmp_path: Path, run_prosec: Runner) -> None:
    assert run_prosec("preflight", tmp_path / "nowhere").returncode == 2
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    assert run_prosec("preflight", tmp_path / "notes.txt").returncode == 2
