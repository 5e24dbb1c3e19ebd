"""The wiring scenarios of corpus/, built end to end with the real `prosec` command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ..conftest import CORPUS, Runner


@pytest.fixture
def scenario(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Copy a corpus program to a scratch directory (builds write dist/ next to it)."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(CORPUS / name, target)
        return target

    return copy


def manifest(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / "dist" / "manifest.next.json").read_text())
    return data


def edges(root: Path) -> set[tuple[str, str, str]]:
    return {
        (e["producer"], e["facet"], e["subscriber"]) for e in manifest(root)["topology"]["edges"]
    }


def test_multi_facet_producer_with_facet_granular_subscribers(scenario, run_prosec: Runner) -> None:  # type: ignore[no-untyped-def]
    root = scenario("wiring-facets")
    result = run_prosec("build", root, "--offline-tools")
    assert result.returncode == 0, result.stdout + result.stderr
    assert edges(root) == {
        ("market-feed", "@atomic", "price-board"),
        ("price-board", "rates", "rates-desk"),
        ("price-board", "fx", "fx-hedger"),
    }
    facets = {c["node"]: c["facets"] for c in manifest(root)["canonicalizers"]}
    assert facets["price-board"] == ["@atomic", "equities", "rates", "fx"]
    explained = run_prosec("explain", "rates-desk", root)
    assert explained.returncode == 0
    assert "qualified" in explained.stdout and "price-board.rates" in explained.stdout


def test_diamond(scenario, run_prosec: Runner) -> None:  # type: ignore[no-untyped-def]
    root = scenario("wiring-diamond")
    assert run_prosec("build", root, "--offline-tools").returncode == 0
    graph = run_prosec("graph", root, "--format", "json")
    parents = json.loads(graph.stdout)["parent_map"]
    assert parents["fulfillment"] == ["billing", "inventory"]
    assert parents["billing"] == ["orders"] and parents["inventory"] == ["orders"]


def test_fan_in_over_producers_and_a_facet_family(scenario, run_prosec: Runner) -> None:  # type: ignore[no-untyped-def]
    root = scenario("wiring-fan-in")
    assert run_prosec("build", root, "--offline-tools").returncode == 0
    into_rollup = {(p, f) for p, f, s in edges(root) if s == "sales-rollup"}
    assert into_rollup == {
        ("region-north", "@atomic"),
        ("region-south", "@atomic"),
        ("region-west", "@atomic"),
        ("sales-feed", "alert:north"),
        ("sales-feed", "alert:south"),
    }


def test_pin_settles_an_ambiguous_need(scenario, run_prosec: Runner) -> None:  # type: ignore[no-untyped-def]
    root = scenario("wiring-pinned")
    result = run_prosec("build", root, "--offline-tools")
    assert result.returncode == 0
    assert edges(root) == {("forecast-ml", "@atomic", "capacity-plan")}
    assert "pinned" in run_prosec("explain", "capacity-plan", root).stdout
    (root / "prose.toml").unlink()
    unpinned = run_prosec("build", root, "--offline-tools", "--format", "json")
    codes = [d["code"] for d in json.loads(unpinned.stdout)]
    assert "wiring_ambiguous" in codes
    assert run_prosec("build", root, "--offline-tools", "--strict").returncode == 1


def test_stale_pin_is_an_error(scenario, run_prosec: Runner) -> None:  # type: ignore[no-untyped-def]
    root = scenario("wiring-pinned")
    toml = root / "prose.toml"
    toml.write_text(toml.read_text().replace('"forecast-ml"', '"forecast-gone"'))
    result = run_prosec("build", root, "--offline-tools", "--format", "json")
    assert result.returncode == 1
    assert [d["code"] for d in json.loads(result.stdout) if d["severity"] == "error"] == [
        "pin_stale"
    ]
    assert not (root / "dist" / "manifest.next.json").exists()


def test_unsatisfied_need_warns_and_strict_fails(scenario, run_prosec: Runner) -> None:  # type: ignore[no-untyped-def]
    root = scenario("wiring-unsatisfied")
    result = run_prosec("build", root, "--offline-tools")
    assert result.returncode == 0
    assert "wiring_unsatisfied" in result.stdout
    assert edges(root) == {("spend-ledger", "@atomic", "budget-review")}
    (root / "dist" / "manifest.next.json").unlink()
    strict = run_prosec("build", root, "--offline-tools", "--strict")
    assert strict.returncode == 1
    assert not (root / "dist" / "manifest.next.json").exists()


def test_cycle_is_an_error_naming_the_path(scenario, run_prosec: Runner) -> None:  # type: ignore[no-untyped-def]
    root = scenario("wiring-cycle")
    result = run_prosec("build", root, "--offline-tools")
    assert result.returncode == 1
    assert "wiring_cycle" in result.stdout
    assert "`ledger-a` → `ledger-b` → `ledger-a`" in result.stdout
    assert not (root / "dist" / "manifest.next.json").exists()


def test_pattern_instance_expands_into_a_node(scenario, run_prosec: Runner) -> None:  # type: ignore[no-untyped-def]
    root = scenario("pattern-instance")
    result = run_prosec("build", root, "--offline-tools")
    assert result.returncode == 0, result.stdout
    nodes = [n["node"] for n in manifest(root)["topology"]["nodes"]]
    assert nodes == ["changelog-drafter", "release-notes", "reviewed-changelog"]
    assert edges(root) == {
        ("changelog-drafter", "@atomic", "reviewed-changelog"),
        ("reviewed-changelog", "@atomic", "release-notes"),
    }


def test_gateway_entry_points(scenario, run_prosec: Runner) -> None:  # type: ignore[no-untyped-def]
    root = scenario("wiring-gateways")
    assert run_prosec("build", root, "--offline-tools").returncode == 0
    assert manifest(root)["topology"]["entry_points"] == ["nightly-sweep", "support-webhook"]
    assert edges(root) == {
        ("support-webhook", "@atomic", "triage"),
        ("nightly-sweep", "@atomic", "triage"),
    }
    mermaid = run_prosec("graph", root).stdout
    assert '(["support-webhook (entry point)"])' in mermaid
    dot = run_prosec("graph", root, "--format", "dot").stdout
    assert '"nightly-sweep" [label="nightly-sweep (entry point)", shape=cds' in dot


def test_self_driven_nodes_carry_their_cadence(scenario, run_prosec: Runner) -> None:  # type: ignore[no-untyped-def]
    root = scenario("wiring-self-driven")
    result = run_prosec("build", root, "--offline-tools")
    assert result.returncode == 0
    assert "wiring_self" in result.stdout
    nodes = {n["node"]: n for n in manifest(root)["topology"]["nodes"]}
    assert nodes["price-watch"]["wake_source"] == "self"
    assert nodes["price-watch"]["cadence"] == "PT6H"
    assert nodes["daily-digest"]["cadence"] == "cron:30 7 * * 1-5"
    assert edges(root) == {("price-watch", "@atomic", "daily-digest")}
