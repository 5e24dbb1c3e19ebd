"""Every upstream program builds through `prosec build` (exit 0 and a manifest) but a
pinned few refused for a genuine error; every need gets a decision and wiring is never
guessed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from prosec.compiler.config import Config
from prosec.compiler.pipeline import CompileResult, compile_project, compile_texts

from ..conftest import UPSTREAM, prosec_bin
from .upstream_support import library_files, upstream_systems

pytestmark = pytest.mark.conformance

WIRING = ("wiring_ambiguous", "wiring_unsatisfied", "wiring_self", "facet_not_emitted", "pin_stale")


SYSTEMS = upstream_systems()


def test_upstream_corpus_is_present() -> None:
    assert len(SYSTEMS) == 47  # 29 example systems, 18 other directories
    assert len(library_files()) == 65  # 61 std/ files, 4 co/ files


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


# Programs with a genuine error, refused with the codes that refuse them: a structural
# one (a responsibility without `### Maintains`, a retired kind), or what upstream's own
# ProseScript validation table (prosescript.md) calls an error: "Unknown call target"
# and "Undefined variable". Everything else builds.
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


def _project(program: Path, tmp_path: Path) -> Path:
    """A writable copy of one program (the upstream checkout is read-only): an example's
    project with its `src/`, a directory, or one library file alone in a directory."""
    target = tmp_path / "project"
    if program.is_file():
        target.mkdir()
        shutil.copy(program, target / program.name)
    else:
        source = program.parent if program.name == "src" else program
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("dist", "runs", "state"))
    return target


def _in_process(program: Path) -> CompileResult:
    if program.is_file():
        text = program.read_text(encoding="utf-8")
        return compile_texts([(program.name, text)], Config(offline_tools=True))
    root = program.parent if program.name == "src" else program
    return compile_project(root, Config(offline_tools=True))


@pytest.mark.parametrize(
    "program",
    [*SYSTEMS, *library_files()],
    ids=lambda p: p.relative_to(UPSTREAM).as_posix() if p.is_absolute() else str(p),
)
def test_every_upstream_program_builds(program: Path, tmp_path: Path) -> None:
    """`prosec build` exits 0 and writes a manifest, unless the program is refused for a
    genuine error: then exit 1, exactly the pinned error codes, and nothing written."""
    name = program.relative_to(UPSTREAM).as_posix()
    root = _project(program, tmp_path)
    result = subprocess.run(
        [prosec_bin(), "build", "--offline-tools", "--no-cache", "--format", "json", "-q", root],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    errors = {r["code"] for r in json.loads(result.stdout) if r["severity"] == "error"}
    manifest = root / "dist" / "manifest.next.json"
    if name in REFUSED:
        assert (result.returncode, errors) == (1, REFUSED[name][0]), result.stderr
        assert not manifest.exists()
        assert not _in_process(program).writable
        return
    assert (result.returncode, errors) == (0, set()), result.stderr
    intent = json.loads(manifest.read_text(encoding="utf-8"))
    assert intent["kind"] == "openprose.compile-phase-ir"
    checked = subprocess.run(
        [prosec_bin(), "validate", manifest], capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_refused_programs_exist() -> None:
    for name in REFUSED:
        assert (UPSTREAM / name).exists(), name
