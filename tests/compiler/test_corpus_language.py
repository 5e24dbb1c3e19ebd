"""The language as users write it, end to end with the real `prosec` command: contract
templates (built, explained, drawn and run), named truths, a producer that failed to
parse, the empty project, and `prosec lint` reporting the build's wiring findings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from prosec.compiler.diagnostics import CODES, Severity

from ..conftest import CORPUS, Runner
from .corpus_support import BUILD_CODES, EXPECTED_CODES, INVALID, WIRING_CODES


def copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(CORPUS / name, target)
    return target


def manifest(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / "dist" / "manifest.next.json").read_text())
    return data


def edges(root: Path) -> set[tuple[str, str, str]]:
    return {
        (e["producer"], e["facet"], e["subscriber"]) for e in manifest(root)["topology"]["edges"]
    }


MOUNTS = ("crane-monitor[east]", "crane-monitor[north]", "crane-monitor[south]")


def telemetry(north: int, south: int, east: int, alarm: str = "", at: str = "08:00") -> str:
    cranes = {
        name: {"lifts": lifts, "alarm": name == alarm}
        for name, lifts in (("north", north), ("south", south), ("east", east))
    }
    return json.dumps({**cranes, "scanned_at": at})


def test_template_mounts_once_per_facet(tmp_path: Path, run_prosec: Runner) -> None:
    root = copy("wiring-template", tmp_path)
    built = run_prosec("build", root, "--offline-tools")
    assert built.returncode == 0, built.stdout + built.stderr
    nodes = [n["node"] for n in manifest(root)["topology"]["nodes"]]
    assert nodes == [*MOUNTS, "crane-telemetry", "harbour-board"]
    assert edges(root) == {
        ("crane-telemetry", "east", "crane-monitor[east]"),
        ("crane-telemetry", "north", "crane-monitor[north]"),
        ("crane-telemetry", "south", "crane-monitor[south]"),
        *(((mount, "@atomic", "harbour-board")) for mount in MOUNTS),
    }
    # each mount is its own node: its own fingerprint, canonicalizer and postconditions
    fingerprints = manifest(root)["contract_fingerprints"]
    assert len({fingerprints[m] for m in MOUNTS}) == 3
    explained = run_prosec("explain", "crane-monitor", root, "--format", "json")
    assert explained.returncode == 0, explained.stderr
    assert [(e["node"], e["template"]["value"]) for e in json.loads(explained.stdout)] == [
        ("crane-monitor[east]", "east"),
        ("crane-monitor[north]", "north"),
        ("crane-monitor[south]", "south"),
    ]
    one = run_prosec("explain", "crane-monitor[north]", root)
    assert "template parameter `crane` = `north`: `crane-telemetry.north`" in one.stdout
    graph = run_prosec("graph", root, "--format", "json")
    assert json.loads(graph.stdout)["parent_map"]["harbour-board"] == list(MOUNTS)


def test_a_moved_facet_wakes_exactly_one_mount(tmp_path: Path, run_prosec: Runner) -> None:
    root = copy("wiring-template", tmp_path)
    assert run_prosec("build", root, "--offline-tools").returncode == 0
    assert run_prosec("activate", root).returncode == 0
    cold = run_prosec("run", "--json", cwd=root)
    assert cold.returncode == 0, cold.stdout + cold.stderr
    assert sorted(json.loads(cold.stdout)["rendered"]) == sorted(
        [*MOUNTS, "crane-telemetry", "harbour-board"]
    )

    def trigger(data: str) -> dict[str, Any]:
        result = run_prosec("trigger", "crane-telemetry", "--json", "--data", data, cwd=root)
        assert result.returncode == 0, result.stdout + result.stderr
        summary: dict[str, Any] = json.loads(result.stdout)
        return summary

    first = trigger(telemetry(3, 5, 1))
    assert sorted(first["rendered"]) == sorted(["crane-telemetry", *MOUNTS])
    # only the north slice moves: only the north monitor renders, then the board
    north = trigger(telemetry(4, 5, 1, alarm="north", at="08:05"))
    assert north["rendered"] == ["crane-telemetry", "crane-monitor[north]", "harbour-board"]
    # only the south slice moves, and its monitor's status stays `ok`: the board sleeps
    south = trigger(telemetry(4, 6, 1, alarm="north", at="08:09"))
    assert south["rendered"] == ["crane-telemetry", "crane-monitor[south]"]
    assert south["skipped"] == ["harbour-board"]
    # an immaterial field alone wakes no mount
    quiet = trigger(telemetry(4, 6, 1, alarm="north", at="08:15"))
    assert [n for n in quiet["rendered"] if n.startswith("crane-monitor")] == []
    board = root / "state" / "world-model" / "harbour-board" / "published"
    assert json.loads((board / "alarms.json").read_text()) == ["north"]


def test_an_instance_binding_wins_over_its_templates(tmp_path: Path, run_prosec: Runner) -> None:
    root = copy("wiring-template", tmp_path)
    with (root / "prose.toml").open("a", encoding="utf-8") as toml:
        toml.write('\n[render."crane-monitor[east]"]\nkind = "command"\ncommand = "false"\n')
    assert run_prosec("build", root, "--offline-tools").returncode == 0
    assert run_prosec("activate", root).returncode == 0
    result = run_prosec("run", "--json", cwd=root)
    summary = json.loads(result.stdout)
    failed = [item["node"] for item in summary["failed"]]  # {node, error, …} records
    monitors = {
        node: status
        for status, nodes in (("rendered", summary["rendered"]), ("failed", failed))
        for node in nodes
        if node.startswith("crane-monitor")
    }
    # `command = "false"` binds the east mount alone; its siblings keep the template's
    assert monitors == {
        "crane-monitor[east]": "failed",
        "crane-monitor[north]": "rendered",
        "crane-monitor[south]": "rendered",
    }


def test_a_truth_named_in_the_maintains_lead_is_a_facet(tmp_path: Path, run_prosec: Runner) -> None:
    root = copy("wiring-named-truth", tmp_path)
    assert run_prosec("build", root, "--offline-tools").returncode == 0
    assert edges(root) == {
        ("till-roll", "takings_ledger", "daily-takings"),
        ("till-roll", "takings_ledger", "stall-report"),
    }
    (till,) = [c for c in manifest(root)["canonicalizers"] if c["node"] == "till-roll"]
    assert till["facets"] == ["@atomic", "takings_ledger"]
    assert till["spec"]["facets"] == [{"facet": "takings_ledger", "paths": ["**"]}]


def test_two_producers_of_one_named_truth_are_ambiguous(tmp_path: Path, run_prosec: Runner) -> None:
    root = copy("wiring-truth-ambiguous", tmp_path)
    result = run_prosec("build", root, "--offline-tools", "--format", "json")
    assert result.returncode == 0, result.stderr
    (record,) = json.loads(result.stdout)
    assert record["code"] == "wiring_ambiguous" and record["severity"] == "warning"
    for part in ("`takings_ledger`", "north-till.takings_ledger", "south-till.takings_ledger"):
        assert part in record["message"]
    assert edges(root) == set()  # no edge guessed
    assert run_prosec("build", root, "--offline-tools", "--strict").returncode == 1


def test_a_need_on_a_file_that_failed_to_parse_says_so(tmp_path: Path, run_prosec: Runner) -> None:
    src = tmp_path / "books" / "src"
    src.mkdir(parents=True)
    (src / "ledger.prose.md").write_text(
        "---\nname: ledger\nkind: [responsibility\n---\n\n### Maintains\n\n- `balances`: x\n"
    )
    (src / "auditor.prose.md").write_text(
        "---\nname: auditor\nkind: responsibility\nid: 6J582CSV07FTQSQ3QCRM04XVK1\n---\n\n"
        "### Requires\n\n- the `balances` of `ledger`\n\n### Maintains\n\n- `findings`: x\n"
    )
    # one file given: its project is read for context, the broken neighbour included
    result = run_prosec("lint", "--format", "json", "src/auditor.prose.md", cwd=src.parent)
    (record,) = json.loads(result.stdout)
    assert record["code"] == "wiring_unsatisfied"
    assert (
        "`ledger` is defined in `src/ledger.prose.md`, but that file failed" in (record["message"])
    )
    assert "shares a word" not in record["message"]


def test_an_empty_project_builds_the_empty_manifest(tmp_path: Path, run_prosec: Runner) -> None:
    (tmp_path / "src").mkdir()
    result = run_prosec("build", tmp_path, "--format", "json")
    assert result.returncode == 0, result.stderr
    (record,) = json.loads(result.stdout)
    assert (record["code"], record["severity"], record["path"]) == ("sources_empty", "info", "src")
    assert manifest(tmp_path)["topology"]["nodes"] == []


def test_lint_fails_on_a_cycle(run_prosec: Runner) -> None:
    result = run_prosec("lint", CORPUS / "wiring-cycle")
    assert result.returncode == 1
    assert " error wiring_cycle " in result.stdout


@pytest.mark.parametrize("code", BUILD_CODES)
def test_lint_reports_each_build_code(code: str, run_prosec: Runner) -> None:
    """Every wiring, pattern and lowering example: lint finds it and fails as build does
    (a warning fails under --strict when its strict severity is an error)."""
    example = INVALID / code
    result = run_prosec("lint", "--format", "json", ".", cwd=example)
    assert {r["code"] for r in json.loads(result.stdout)} == {code}
    info = CODES[code]
    assert result.returncode == (1 if info.severity is Severity.ERROR else 0)
    if info.strict_severity is Severity.ERROR:
        assert run_prosec("lint", "--strict", ".", cwd=example).returncode == 1


def test_select_and_ignore_cover_the_wiring_codes(run_prosec: Runner) -> None:
    target = CORPUS / "wiring-cycle"
    ignored = run_prosec("lint", "--ignore", "wiring_cycle", target)
    assert ignored.returncode == 0 and ignored.stdout == ""
    family = run_prosec("lint", "--select", "wiring_*", "--format", "json", target)
    assert family.returncode == 1
    assert {r["code"] for r in json.loads(family.stdout)} == {"wiring_cycle"}
    other = run_prosec("lint", "--select", "id_missing", target)
    assert other.returncode == 0


@pytest.mark.parametrize("code", WIRING_CODES)
def test_select_and_ignore_reach_each_wiring_code(code: str, run_prosec: Runner) -> None:
    """`--select CODE` keeps a wiring finding and `--ignore CODE` drops it, the strict
    exit status included: filtering applies to the build's codes as to the rule chain's."""
    example = INVALID / code
    selected = run_prosec(
        "lint", "--strict", "--select", code, "--format", "json", ".", cwd=example
    )
    assert {r["code"] for r in json.loads(selected.stdout)} == {code}
    failing = CODES[code].strict_severity is Severity.ERROR or (
        CODES[code].severity is Severity.ERROR
    )
    assert selected.returncode == (1 if failing else 0)
    ignored = run_prosec("lint", "--strict", "--ignore", code, "--format", "json", ".", cwd=example)
    assert (ignored.returncode, json.loads(ignored.stdout)) == (0, [])


# the corpus programs that exist to show a wiring finding (tests/compiler/corpus_support.py)
WIRING_SCENARIOS = sorted(name for name in EXPECTED_CODES if name.startswith("wiring-"))


def test_the_wiring_scenarios_are_the_ones_showing_a_finding() -> None:
    assert WIRING_SCENARIOS == [
        "wiring-cycle",
        "wiring-self-driven",
        "wiring-truth-ambiguous",
        "wiring-unsatisfied",
    ]


@pytest.mark.parametrize("name", WIRING_SCENARIOS)
def test_lint_of_each_wiring_scenario_exits_with_its_code(name: str, run_prosec: Runner) -> None:
    """`prosec lint corpus/wiring-…` reports the scenario's code; it exits 1 when the code
    is an error, or under --strict when its strict severity is (an info never fails)."""
    (code,) = EXPECTED_CODES[name]
    info = CODES[code]
    plain = run_prosec("lint", "--format", "json", CORPUS / name)
    assert {r["code"] for r in json.loads(plain.stdout)} == {code}
    assert plain.returncode == (1 if info.severity is Severity.ERROR else 0), plain.stderr
    strict = run_prosec("lint", "--strict", CORPUS / name)
    assert f" {code} " in strict.stdout
    fails = Severity.ERROR in (info.severity, info.strict_severity)
    assert strict.returncode == (1 if fails else 0), strict.stderr


def test_a_malformed_id_never_blocks_a_build(tmp_path: Path, run_prosec: Runner) -> None:
    """`id: tally-node` (not a Crockford id) is a warning: the build writes its manifest,
    and only --strict refuses it."""
    root = tmp_path / "bad-id"
    shutil.copytree(INVALID / "id_malformed", root)
    built = run_prosec("build", root, "--offline-tools", "--format", "json")
    assert built.returncode == 0, built.stdout + built.stderr
    (record,) = json.loads(built.stdout)
    assert (record["code"], record["severity"]) == ("id_malformed", "warning")
    assert [n["node"] for n in manifest(root)["topology"]["nodes"]] == ["bad-id"]
    (root / "dist" / "manifest.next.json").unlink()
    strict = run_prosec("build", root, "--offline-tools", "--strict", "--no-cache")
    assert strict.returncode == 1
    assert " error id_malformed " in strict.stdout
    assert not (root / "dist" / "manifest.next.json").exists()
