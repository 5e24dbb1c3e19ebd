"""`prosec install` against real bare repositories reached through prose.toml's [deps] map:
install, lock, update, frozen, transitive, cycle, conflict, missing and tampered clones."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
from pathlib import Path

import pytest

from ...conftest import Runner, prosec_bin
from .repos import Mirror, contract, git

HOST = "example.org"


def function(name: str, uses: tuple[str, ...] = ()) -> str:
    """A function whose ProseScript `use`s each identifier in `uses`."""
    body = "### Parameters\n\n- `x`: the input\n\n### Returns\n\n- `y`: the output\n"
    if uses:
        lines = "".join(f'use "{u}" as dep{i}\n' for i, u in enumerate(uses))
        body += f"\n### Execution\n\n```prose\n{lines}\nlet y = call dep0\n  x: x\nreturn y\n```\n"
    return contract(name, "function", body)


def app(root: Path, *uses: str) -> Path:
    """A project whose one function uses `uses`, with `example.org` mapped to ../mirror."""
    (root / "src").mkdir(parents=True)
    (root / "prose.toml").write_text(f'[deps]\n"{HOST}" = "../mirror"\n', encoding="utf-8")
    (root / "src" / "main.prose.md").write_text(function("main", uses), encoding="utf-8")
    (root / "src" / "other.prose.md").write_text(function("other"), encoding="utf-8")
    return root


def lock_of(root: Path) -> dict[str, str]:
    text = (root / "prose.lock").read_text(encoding="utf-8")
    return dict(line.split() for line in text.splitlines() if line and not line.startswith("#"))


@pytest.fixture
def mirror(tmp_path: Path) -> Mirror:
    return Mirror(tmp_path / "mirror")


def test_install_clones_checks_out_and_locks(
    tmp_path: Path, mirror: Mirror, run_prosec: Runner
) -> None:
    first = mirror.publish("acme/lib", {"price.prose.md": function("price")})
    root = app(tmp_path / "app", f"{HOST}/acme/lib/price")
    result = run_prosec("install", cwd=root)
    assert result.returncode == 0, result.stderr
    assert "cloning example.org/acme/lib" in result.stderr  # progress, on stderr
    assert result.stdout == f"{HOST}/acme/lib {first}\n"
    assert lock_of(root) == {f"{HOST}/acme/lib": first}
    clone = root / "deps" / HOST / "acme" / "lib"
    assert git("rev-parse", "HEAD", cwd=clone) == first
    assert run_prosec("lint", ".", cwd=root).returncode == 0
    # a newer commit upstream changes nothing until asked: the lock holds
    mirror.publish("acme/lib", {"price.prose.md": function("price") + "\nNewer.\n"})
    again = run_prosec("install", cwd=root)
    assert again.returncode == 0 and "prose.lock unchanged" in again.stderr
    assert lock_of(root) == {f"{HOST}/acme/lib": first}


def test_a_fresh_checkout_installs_the_locked_commit(
    tmp_path: Path, mirror: Mirror, run_prosec: Runner
) -> None:
    first = mirror.publish("acme/lib", {"price.prose.md": function("price")})
    root = app(tmp_path / "app", f"{HOST}/acme/lib/price")
    assert run_prosec("install", cwd=root).returncode == 0
    mirror.publish("acme/lib", {"price.prose.md": function("price") + "\nNewer.\n"})
    shutil.rmtree(root / "deps")  # a new clone of the project: deps/ is not committed
    result = run_prosec("install", "--frozen", cwd=root)
    assert result.returncode == 0, result.stderr
    assert git("rev-parse", "HEAD", cwd=root / "deps" / HOST / "acme" / "lib") == first


def test_update_moves_to_the_default_branch_head(
    tmp_path: Path, mirror: Mirror, run_prosec: Runner
) -> None:
    mirror.publish("acme/lib", {"price.prose.md": function("price")})
    root = app(tmp_path / "app", f"{HOST}/acme/lib/price")
    assert run_prosec("install", cwd=root).returncode == 0
    newer = mirror.publish("acme/lib", {"price.prose.md": function("price") + "\nNewer.\n"})
    frozen = run_prosec("install", "--frozen", "--update", cwd=root)
    assert frozen.returncode == 2 and "contradict" in frozen.stderr
    result = run_prosec("install", "--update", cwd=root)
    assert result.returncode == 0, result.stderr
    assert lock_of(root) == {f"{HOST}/acme/lib": newer}
    assert "1 moved" in result.stderr and "prose.lock written" in result.stderr
    assert "Newer." in (root / "deps" / HOST / "acme/lib/price.prose.md").read_text("utf-8")


def test_frozen_fails_when_the_lock_would_change(
    tmp_path: Path, mirror: Mirror, run_prosec: Runner
) -> None:
    mirror.publish("acme/lib", {"price.prose.md": function("price")})
    other = mirror.publish("acme/tax", {"tax.prose.md": function("tax")})
    root = app(tmp_path / "app", f"{HOST}/acme/lib/price")
    assert run_prosec("install", cwd=root).returncode == 0
    before = (root / "prose.lock").read_bytes()
    (root / "src" / "main.prose.md").write_text(
        function("main", (f"{HOST}/acme/lib/price", f"{HOST}/acme/tax/tax")), encoding="utf-8"
    )
    result = run_prosec("install", "--frozen", cwd=root)
    assert result.returncode == 1
    assert f"prose.lock would change (--frozen):\n  + {HOST}/acme/tax {other}" in result.stderr
    assert (root / "prose.lock").read_bytes() == before
    no_lock = app(tmp_path / "fresh", f"{HOST}/acme/lib/price")
    assert run_prosec("install", "--frozen", cwd=no_lock).returncode == 1


def test_transitive_dependencies_are_locked_flat_and_sorted(
    tmp_path: Path, mirror: Mirror, run_prosec: Runner
) -> None:
    tax = mirror.publish("acme/tax", {"tax.prose.md": function("tax")})
    lib = mirror.publish(
        "acme/lib", {"price.prose.md": function("price", (f"{HOST}/acme/tax/tax",))}
    )
    root = app(tmp_path / "app", f"{HOST}/acme/lib/price")
    result = run_prosec("install", cwd=root)
    assert result.returncode == 0, result.stderr
    assert list(lock_of(root).items()) == [(f"{HOST}/acme/lib", lib), (f"{HOST}/acme/tax", tax)]
    build = run_prosec("build", "--offline-tools", cwd=root)
    assert build.returncode == 0, build.stderr


def test_a_cycle_is_an_error_naming_it(tmp_path: Path, mirror: Mirror, run_prosec: Runner) -> None:
    mirror.publish("acme/a", {"a.prose.md": function("a", (f"{HOST}/acme/b/b",))})
    mirror.publish("acme/b", {"b.prose.md": function("b", (f"{HOST}/acme/a/a2",))})
    mirror.publish("acme/a", {"a2.prose.md": function("a2")})
    root = app(tmp_path / "app", f"{HOST}/acme/a/a")
    result = run_prosec("install", cwd=root)
    assert result.returncode == 1
    assert f"circular dependency: {HOST}/acme/a → {HOST}/acme/b → {HOST}/acme/a" in result.stderr
    assert not (root / "prose.lock").exists()


def test_a_conflict_takes_the_newer_commit_and_warns(
    tmp_path: Path, mirror: Mirror, run_prosec: Runner
) -> None:
    v1 = mirror.publish(
        "acme/util", {"u.prose.md": function("u")}, tag="v1", date="2024-01-01T00:00:00Z"
    )
    v2 = mirror.publish(
        "acme/util",
        {"u.prose.md": function("u") + "\nv2.\n"},
        tag="v2",
        date="2025-06-01T00:00:00Z",
    )
    mirror.publish("acme/kit", {"kit.prose.md": function("kit", (f"{HOST}/acme/util/u@v2",))})
    root = app(tmp_path / "app", f"{HOST}/acme/util/u@v1", f"{HOST}/acme/kit/kit")
    result = run_prosec("install", cwd=root)
    assert result.returncode == 0, result.stderr
    assert lock_of(root)[f"{HOST}/acme/util"] == v2
    assert f"warning: version conflict for {HOST}/acme/util:" in result.stderr
    assert f"requires @v1 ({v1[:12]})" in result.stderr
    assert f"{HOST}/acme/kit requires @v2 ({v2[:12]})" in result.stderr
    assert "the newer, committed 2025-06-01" in result.stderr
    # the lock is the override: choosing v1 there sticks, with the warning kept
    text = (root / "prose.lock").read_text("utf-8").replace(v2, v1)
    (root / "prose.lock").write_text(text, encoding="utf-8")
    again = run_prosec("install", cwd=root)
    assert again.returncode == 0, again.stderr
    assert lock_of(root)[f"{HOST}/acme/util"] == v1 and "as prose.lock chooses" in again.stderr
    assert git("rev-parse", "HEAD", cwd=root / "deps" / HOST / "acme" / "util") == v1


def test_missing_repositories_and_files_fail(
    tmp_path: Path, mirror: Mirror, run_prosec: Runner
) -> None:
    mirror.publish("acme/lib", {"price.prose.md": function("price")})
    root = app(tmp_path / "app", f"{HOST}/acme/nowhere/x")
    result = run_prosec("install", cwd=root)
    assert result.returncode == 1
    assert f"cannot clone {HOST}/acme/nowhere: git clone failed" in result.stderr
    assert not (root / "deps" / HOST / "acme" / "nowhere").exists()  # never half-cloned
    typo = app(tmp_path / "typo", f"{HOST}/acme/lib/prices")
    result = run_prosec("install", cwd=typo)
    assert result.returncode == 1
    assert "src/main.prose.md:" in result.stderr and "names no file" in result.stderr
    bare = app(tmp_path / "bare", "acme/lib/price")
    result = run_prosec("install", cwd=bare)
    assert result.returncode == 1 and "reserved for the OpenProse registry" in result.stderr


def test_a_tampered_checkout_is_reported_never_overwritten(
    tmp_path: Path, mirror: Mirror, run_prosec: Runner
) -> None:
    first = mirror.publish("acme/lib", {"price.prose.md": function("price")})
    root = app(tmp_path / "app", f"{HOST}/acme/lib/price")
    assert run_prosec("install", cwd=root).returncode == 0
    clone = root / "deps" / HOST / "acme" / "lib"
    (clone / "price.prose.md").write_text(function("price") + "\nEdited here.\n", "utf-8")
    (clone / "notes.md").write_text("mine\n", "utf-8")
    result = run_prosec("install", cwd=root)
    assert result.returncode == 1
    assert "has local changes (modified: price.prose.md, untracked: notes.md)" in result.stderr
    assert "Edited here." in (clone / "price.prose.md").read_text("utf-8")
    preflight = run_prosec("preflight", cwd=root)
    assert preflight.returncode == 1
    assert f"fail  dependency {HOST}/acme/lib: deps/{HOST}/acme/lib has local changes" in (
        preflight.stdout
    )
    # a clean clone at another commit: preflight names both, install moves it back
    git("checkout", "--quiet", "--", "price.prose.md", cwd=clone)
    (clone / "notes.md").unlink()
    newer = mirror.publish("acme/lib", {"price.prose.md": function("price") + "\nNewer.\n"})
    git("fetch", "--quiet", "origin", cwd=clone)
    git("checkout", "--quiet", newer, cwd=clone)
    preflight = run_prosec("preflight", cwd=root)
    assert preflight.returncode == 1
    assert f"is at {newer[:12]}, prose.lock pins {first[:12]}" in preflight.stdout
    assert run_prosec("install", cwd=root).returncode == 0
    assert git("rev-parse", "HEAD", cwd=clone) == first
    assert run_prosec("preflight", cwd=root).returncode == 0


def test_a_host_owner_key_maps_one_owner(tmp_path: Path, run_prosec: Runner) -> None:
    mirror = Mirror(tmp_path / "elsewhere")
    sha = mirror.publish("acme/lib", {"price.prose.md": function("price")})
    root = app(tmp_path / "app", f"{HOST}/acme/lib/price")
    (root / "prose.toml").write_text(
        f'[deps]\n"{HOST}" = "../mirror"\n"{HOST}/acme" = "../elsewhere/acme"\n', encoding="utf-8"
    )
    result = run_prosec("install", cwd=root)
    assert result.returncode == 0, result.stderr
    assert lock_of(root) == {f"{HOST}/acme/lib": sha}


def test_a_bad_lock_or_deps_table_exits_two(tmp_path: Path, run_prosec: Runner) -> None:
    root = app(tmp_path / "app", f"{HOST}/acme/lib/price")
    (root / "prose.lock").write_text("example.org/acme/lib not-a-sha\n", encoding="utf-8")
    result = run_prosec("install", cwd=root)
    assert result.returncode == 2 and "prose.lock:1:" in result.stderr
    (root / "prose.lock").unlink()
    (root / "prose.toml").write_text('[deps]\n"acme" = "../mirror"\n', encoding="utf-8")
    result = run_prosec("install", cwd=root)
    assert result.returncode == 2 and "prose.toml:2: deps" in result.stderr


def test_no_dependencies_is_nothing_to_do(tmp_path: Path, run_prosec: Runner) -> None:
    root = app(tmp_path / "app")
    result = run_prosec("install", cwd=root)
    assert result.returncode == 0 and "no dependencies to install" in result.stderr
    assert not (root / "prose.lock").exists()


def test_std_and_co_share_one_clone_and_a_sha_pin_holds(
    tmp_path: Path, mirror: Mirror, run_prosec: Runner
) -> None:
    files = {
        "packages/std/evals/grade.prose.md": function("grade"),
        "packages/co/tools/fmt/index.prose.md": function("fmt"),
    }
    first = mirror.publish("openprose/prose", files)
    newer = mirror.publish("openprose/prose", {"README.md": "newer\n"})
    root = app(tmp_path / "app", f"std/evals/grade@{first}", "co/tools/fmt")
    (root / "prose.toml").write_text(
        '[deps]\n"github.com/openprose" = "../mirror/openprose"\n', encoding="utf-8"
    )
    result = run_prosec("install", cwd=root)
    assert result.returncode == 0, result.stderr
    # one clone, one lock entry, at the pinned commit rather than the newer head
    assert newer != first and lock_of(root) == {"github.com/openprose/prose": first}
    assert [p.name for p in (root / "deps" / "github.com" / "openprose").iterdir()] == ["prose"]
    assert result.stderr.count("cloning github.com/openprose/prose") == 1
    build = run_prosec("build", "--offline-tools", cwd=root)
    assert build.returncode == 0, build.stderr
    intent = (root / "dist" / "manifest.next.json").read_text(encoding="utf-8")
    for path in files:
        assert f"deps/github.com/openprose/prose/{path}" in intent


def test_git_progress_streams_to_a_terminal_stderr(tmp_path: Path, mirror: Mirror) -> None:
    """With stderr on a terminal, install forwards git's own clone progress there."""
    mirror.publish("acme/lib", {"price.prose.md": function("price")})
    root = app(tmp_path / "app", f"{HOST}/acme/lib/price")
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [prosec_bin(), "install"],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=120,
            check=False,
        )
        os.close(follower)
        follower = -1
        seen = b""
        while True:  # bounded: the child has exited, the terminal holds what it wrote
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    assert done.returncode == 0
    text = seen.decode("utf-8", "replace")
    assert "Cloning into" in text  # git's own progress
    assert f"prosec: cloned {HOST}/acme/lib in " in text
