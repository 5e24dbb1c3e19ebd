"""The upstream programs the conformance tests build and lint: example systems, the other
program directories, and the library files built one by one."""

from __future__ import annotations

from pathlib import Path

from ..conftest import UPSTREAM

EXAMPLES = "skills/open-prose/examples/"


def upstream_systems() -> list[Path]:
    """Each example `src/` and every other directory holding `.prose.md` programs (the
    reactor packages' examples and fixtures included)."""
    if not UPSTREAM.is_dir():
        return []
    examples = sorted((UPSTREAM / EXAMPLES).glob("*/src"))
    others = sorted(
        {
            p.parent
            for p in UPSTREAM.rglob("*.prose.md")
            if EXAMPLES not in p.relative_to(UPSTREAM).as_posix()
        }
    )
    return [*examples, *others]


def library_files() -> list[Path]:
    """Each `std/` and `co/` file, built on its own."""
    if not UPSTREAM.is_dir():
        return []
    return sorted(
        [*UPSTREAM.glob("packages/std/**/*.prose.md"), *UPSTREAM.glob("packages/co/**/*.prose.md")]
    )


def upstream_programs() -> list[Path]:
    """Each example project, every other directory of programs, and each `std/` and `co/`
    file: the programs the conformance build test builds (test_upstream_build.py)."""
    return [
        *(system.parent if system.name == "src" else system for system in upstream_systems()),
        *library_files(),
    ]
