"""Every upstream program builds (exit 0 and a manifest) but a pinned few refused for a
structural error; every need gets a decision and wiring is never guessed."""

from __future__ import annotations

from pathlib import Path

import pytest
from prosec.compiler.config import Config
from prosec.compiler.diagnostics import Severity
from prosec.compiler.pipeline import CompileResult, compile_project, compile_texts

from ..conftest import UPSTREAM

pytestmark = pytest.mark.conformance

WIRING = ("wiring_ambiguous", "wiring_unsatisfied", "wiring_self", "facet_not_emitted", "pin_stale")


def upstream_systems() -> list[Path]:
    """Each example `src/` and every other directory holding `.prose.md` programs."""
    if not UPSTREAM.is_dir():
        return []
    examples = sorted((UPSTREAM / "skills" / "open-prose" / "examples").glob("*/src"))
    others = sorted(
        {p.parent for p in UPSTREAM.rglob("*.prose.md") if "/examples/" not in p.as_posix()}
    )
    return [*examples, *others]


SYSTEMS = upstream_systems()


def test_upstream_corpus_is_present() -> None:
    assert len(SYSTEMS) > 40


@pytest.mark.parametrize(
    "system",
    SYSTEMS,
    ids=lambda p: p.relative_to(UPSTREAM).as_posix() if p.is_absolute() else str(p),
)
def test_builds_and_reports_every_need(system: Path) -> None:
    root = system.parent if system.name == "src" else system
    result = compile_project(root, Config(offline_tools=True))
    assert not result.internal, [
        d.message for d in result.diagnostics if d.code == "internal_error"
    ]
    assert result.intent is not None
    topology = result.unit.topology
    assert topology is not None
    needs = [
        (contract.name, need.span)
        for node in topology.nodes
        for contract in (node.contract,)
        for need in contract.needs
    ]
    assert len(topology.resolutions) == len(needs)  # every need got a decision
    flagged = {(d.span.path, d.span.line) for d in result.diagnostics if d.code in WIRING}
    for resolution in topology.resolutions:
        if resolution.status in ("ambiguous", "unsatisfied", "self"):
            where = (resolution.need.span.path, resolution.need.span.line)
            assert where in flagged, f"silent {resolution.status} need at {where}"
        if resolution.status == "wired":
            assert resolution.edges


# Programs with a genuine structural error: refused, with the codes that refuse them.
REFUSED = {
    "tests/open-prose/responsibility-runtime": (
        {"maintains_missing", "kind_retired"},
        "a responsibility without `### Maintains`, and stargazer-outreach/ below it is "
        "written in the retired `system`/`service` kinds",
    ),
    "tests/open-prose/responsibility-runtime/stargazer-outreach": (
        {"kind_retired"},
        "written in the retired `system`/`service` kinds",
    ),
    "packages/std/ops": (
        {"prosescript_unknown_call"},
        "wire.prose.md calls `resolver`, `matcher` and `manifest-writer`, which no "
        "program defines (each file alone builds: a lone file's calls are not checked)",
    ),
    "packages/std/patterns": (
        {"prosescript_undefined_name"},
        "fan-out.prose.md reads `task_brief`, which it never declares",
    ),
    "packages/std/patterns/fan-out.prose.md": (
        {"prosescript_undefined_name"},
        "reads `task_brief`, which it never declares",
    ),
}


def std_files() -> list[Path]:
    return sorted(UPSTREAM.glob("packages/std/**/*.prose.md")) if UPSTREAM.is_dir() else []


def _compile(program: Path) -> CompileResult:
    if program.is_file():  # a std/ file built on its own
        text = program.read_text(encoding="utf-8")
        return compile_texts([(program.name, text)], Config(offline_tools=True))
    root = program.parent if program.name == "src" else program
    return compile_project(root, Config(offline_tools=True))


@pytest.mark.parametrize(
    "program",
    [*SYSTEMS, *std_files()],
    ids=lambda p: p.relative_to(UPSTREAM).as_posix() if p.is_absolute() else str(p),
)
def test_every_upstream_program_builds(program: Path) -> None:
    """Exit 0 and a manifest, unless the program is refused for a structural error."""
    name = program.relative_to(UPSTREAM).as_posix()
    result = _compile(program)
    errors = {d.code for d in result.diagnostics if d.severity is Severity.ERROR}
    if name in REFUSED:
        assert errors == REFUSED[name][0] and not result.writable
    else:
        assert result.writable and result.intent is not None, sorted(errors)


def test_refused_programs_exist() -> None:
    for name in REFUSED:
        assert (UPSTREAM / name).exists(), name
