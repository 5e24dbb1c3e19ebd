"""The key/value namespaces: keys built and parsed in one module, spelled nowhere else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from prosec.runtime.keys import Namespace, caller_key, clock_key, external_key, parse_key

REPO = Path(__file__).resolve().parents[2]


def test_keys_round_trip() -> None:
    assert caller_key("audience") == "caller.audience"
    assert external_key("wire-feed") == "external.wire-feed"
    assert clock_key("front-page") == "clock.front-page"
    for build, namespace in (
        (caller_key, Namespace.CALLER),
        (external_key, Namespace.EXTERNAL),
        (clock_key, Namespace.CLOCK),
    ):
        assert parse_key(build("a.b")) == (namespace, "a.b")


@pytest.mark.parametrize("key", ["audience", "caller.", "cache.x", ".x"])
def test_a_key_outside_every_namespace_is_refused(key: str) -> None:
    with pytest.raises(
        ValueError, match=re.escape(f"{key!r} is not `<caller|external|clock|inbox>.<name>`")
    ):
        parse_key(key)


def test_no_other_module_spells_a_namespace() -> None:
    prefix = re.compile(rf"""f?["'](?:{"|".join(Namespace)})\.""")
    owner = REPO / "runtime" / "keys.py"
    spelled = [
        f"{path.relative_to(REPO)}:{number}"
        for package in ("runtime", "compiler")
        for path in sorted((REPO / package).rglob("*.py"))
        if path != owner
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if prefix.search(line)
    ]
    assert spelled == []
