"""Crash-safe file primitives and confinement of untrusted paths."""

from __future__ import annotations

from pathlib import Path

import pytest
from prosec.runtime.fsio import (
    Confiner,
    PathEscapeError,
    append_line,
    atomic_write_bytes,
    confined,
    read_tree,
    replace_dir,
    safe_name,
)


def test_atomic_write_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "a/b.json"
    atomic_write_bytes(target, b"1")
    atomic_write_bytes(target, b"2", durable=False)
    assert target.read_bytes() == b"2"
    assert sorted(p.name for p in target.parent.iterdir()) == ["b.json"]


def test_append_line(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    append_line(path, b"{}")
    append_line(path, b"[]")
    assert path.read_bytes() == b"{}\n[]\n"
    with pytest.raises(ValueError):
        append_line(path, b"a\nb")


@pytest.mark.parametrize("bad", ["", ".", "..", "a/b", "a\\b", "x\x00", "a\nb", "t\tab"])
def test_safe_name_refuses(bad: str) -> None:
    with pytest.raises(PathEscapeError):
        safe_name(bad)


def test_confined_refuses_escapes(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    assert confined(base, "x/y") == base / "x/y"
    for bad in ("../x", "/etc", "a/../../x"):
        with pytest.raises(PathEscapeError):
            confined(base, bad)
    (base / "link").symlink_to(tmp_path)
    with pytest.raises(PathEscapeError, match="symlink"):
        confined(base, "link/outside")


def test_confiner_decides_as_confined_does(tmp_path: Path) -> None:
    """Every relative path, through symlinked files and folders (inside, outside, dangling,
    a loop): Confiner accepts or refuses it exactly as `confined` does."""
    base = tmp_path / "base"
    (base / "d/e").mkdir(parents=True)
    (base / "f").write_text("x")
    (base / "in-link").symlink_to(base / "d")
    (base / "out-link").symlink_to(tmp_path)
    (base / "d/file-out").symlink_to(tmp_path / "elsewhere")
    (base / "d/file-in").symlink_to(base / "f")
    (base / "d/dangling").symlink_to(base / "nowhere")
    (base / "d/e/up").symlink_to("../..")
    (base / "d/e/out").symlink_to("../../..")
    paths = [
        "f", "d/e/x", "in-link/e", "in-link/file-out", "out-link/x", "d/file-out", "d/file-in",
        "d/dangling", "d/e/up/f", "d/e/out/x", "d/e/out", "new/deep/file", "../x", "/etc", "",
        "a/./b", "in-link/e/up/in-link/file-in",
    ]  # fmt: skip
    confine = Confiner(base, "source path")
    for relative in paths * 2:  # the second round from its folder cache
        try:
            expected: object = confined(base, relative, "source path")
        except PathEscapeError as exc:
            expected = str(exc)
        try:
            found: object = confine(relative)
        except PathEscapeError as exc:
            found = str(exc)
        assert found == expected, relative


def test_replace_dir_and_read_tree(tmp_path: Path) -> None:
    target = tmp_path / "pub"
    replace_dir(target, {"a.json": b"1", "d/b.md": b"2"})
    replace_dir(target, {"c.json": b"3"})
    assert read_tree(target) == {"c.json": b"3"}
    assert [p.name for p in tmp_path.iterdir()] == ["pub"]
    (target / "evil").symlink_to("/etc/passwd")
    with pytest.raises(PathEscapeError):
        read_tree(target)
