"""prose.lock: strict reading with line numbers, sorted deterministic writing."""

from __future__ import annotations

from pathlib import Path

import pytest
from prosec.compiler.deps.lock import Lock, LockError, parse_lock, read_lock, write_lock

A = "a" * 40
B = "b" * 40


def test_comments_and_blank_lines_are_skipped() -> None:
    lock = parse_lock(f"# pinned\n\ngitlab.com/team/repo {B}\ngithub.com/alice/x {A}  \n")
    assert lock.entries == {"gitlab.com/team/repo": B, "github.com/alice/x": A}


def test_written_sorted_with_a_header(tmp_path: Path) -> None:
    lock = Lock(entries={"gitlab.com/team/repo": B, "github.com/alice/x": A})
    assert write_lock(tmp_path, lock) is True
    text = (tmp_path / "prose.lock").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert lines == [f"github.com/alice/x {A}", f"gitlab.com/team/repo {B}"]
    assert read_lock(tmp_path) == lock
    assert write_lock(tmp_path, Lock(entries=dict(reversed(lock.entries.items())))) is False


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (f"github.com/alice/x {A[:12]}\n", 1),  # abbreviated
        (f"# ok\nalice/x {A}\n", 2),  # no host
        ("github.com/alice/x\n", 1),
        (f"github.com/alice/x {A}\ngithub.com/alice/x {B}\n", 2),  # pinned twice
    ],
)
def test_a_bad_line_is_named(text: str, line: int) -> None:
    with pytest.raises(LockError) as caught:
        parse_lock(text)
    assert f"prose.lock:{line}:" in str(caught.value)


def test_no_lock_is_none_and_a_folder_is_an_error(tmp_path: Path) -> None:
    assert read_lock(tmp_path) is None
    (tmp_path / "prose.lock").mkdir()
    with pytest.raises(LockError):
        read_lock(tmp_path)
