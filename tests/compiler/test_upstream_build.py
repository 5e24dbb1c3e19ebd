"""Every upstream program directory builds without an exception, wiring never guessed."""

from __future__ import annotations

from pathlib import Path

import pytest
from prosec.compiler.config import Config
from prosec.compiler.pipeline import compile_project

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
