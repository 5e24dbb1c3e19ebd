"""Every `### Continuity` and `### Schedule` written in the corpora lowers to a cadence the
runtime keeps: the compiler and `prosec run` share one cadence grammar."""

from __future__ import annotations

from pathlib import Path

import pytest
from prosec.compiler.parse import parse_source
from prosec.compiler.passes.continuity import lower
from prosec.runtime.cadence import Cron, Interval, parse_cadence

from ..conftest import CORPUS


def lowered_cadences(root: Path) -> dict[str, str]:
    """`path#contract` → the cadence the Continuity lowering emits, for every program; no
    stated cadence may be one the lowering had to drop because the runtime refuses it."""
    found = {}
    for path in sorted(root.rglob("*.prose.md")):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # corpus/invalid/file_unreadable
        source, _ = parse_source(path.relative_to(root).as_posix(), text)
        for contract in source.contracts:
            continuity, diagnostics = lower(contract)
            refused = [d.message for d in diagnostics if "the runtime cannot keep" in d.message]
            assert refused == [], f"{path}: {refused}"
            if continuity.cadence is not None:
                found[f"{source.path}#{contract.name}"] = continuity.cadence
    return found


def _kept(cadences: dict[str, str]) -> list[type]:
    kinds = []
    for where, cadence in cadences.items():
        try:
            kinds.append(type(parse_cadence(cadence)))
        except ValueError as exc:
            pytest.fail(f"{where}: the compiler emitted {cadence!r}, which `run` refuses: {exc}")
    return kinds


def test_every_corpus_cadence_is_kept_by_the_runtime() -> None:
    kinds = _kept(lowered_cadences(CORPUS))
    assert Cron in kinds and Interval in kinds and len(kinds) >= 10


@pytest.mark.conformance
def test_every_upstream_cadence_is_kept_by_the_runtime(upstream: Path) -> None:
    kinds = _kept(lowered_cadences(upstream))
    assert Cron in kinds and Interval in kinds
