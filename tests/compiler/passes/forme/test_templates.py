"""Forme's language extensions: contract templates, named truths, needs on broken files."""

from __future__ import annotations

import pytest
from prosec.compiler.ir import Rung

from ...helpers import codes, edges, node, wire

FEED = node(
    "feed",
    kind="gateway",
    maintains="#### alpha\n- `alpha`: a\n#### beta\n- `beta`: b\n#### gamma\n- `gamma`: c",
)


def template(name: str, parameter: str, requires: str, title: str = "Worker") -> tuple[str, str]:
    """A responsibility whose `#` title ends in `[parameter]`: a contract template."""
    path, text = node(name, requires=requires)
    _, frontmatter, body = text.split("---\n", 2)
    return path, f"---\n{frontmatter}---\n\n# {title} [{parameter}]\n\n{body}"


WORKER = template("worker", "lane", "- the `lane` facet of `feed` (NOT `@atomic`)")


def test_a_template_mounts_once_per_facet_of_its_producer() -> None:
    topology, found = wire(FEED, WORKER)
    assert found == []
    mounts = [n for n in topology.nodes if n.instance is not None]
    assert [(n.name, n.instance and n.instance.facet) for n in mounts] == [
        ("worker[alpha]", "alpha"),
        ("worker[beta]", "beta"),
        ("worker[gamma]", "gamma"),
    ]
    assert all(n.contract.name == n.name for n in mounts)  # each mount is its own contract
    assert edges(topology) == {("feed", f, f"worker[{f}]") for f in ("alpha", "beta", "gamma")}
    assert {r.rung for r in topology.resolutions} == {Rung.QUALIFIED}


def test_a_family_parameter_ranges_over_the_family() -> None:
    ledger = node(
        "ledger", maintains="#### item:a1\n- `a1`: x\n#### item:b2\n- `b2`: y\n#### total\n- `t`: z"
    )
    summary = template("summary", "item", "- the `item:<id>` facet of `ledger`")
    topology, found = wire(ledger, summary)
    assert found == []
    assert edges(topology) == {
        ("ledger", "item:a1", "summary[a1]"),
        ("ledger", "item:b2", "summary[b2]"),
    }


@pytest.mark.parametrize(
    "need",
    [
        "- every `worker`: one input per lane",
        "- `worker`: each lane's output",
        "- `worker-alpha`, `worker-beta` and `worker-gamma` (each via @atomic)",
    ],
)
def test_a_consumer_of_the_template_subscribes_to_every_mount(need: str) -> None:
    topology, found = wire(FEED, WORKER, node("board", requires=need))
    assert codes(found) == []
    into_board = {(p, f) for p, f, s in edges(topology) if s == "board"}
    assert into_board == {(f"worker[{f}]", "@atomic") for f in ("alpha", "beta", "gamma")}


def test_one_mount_by_the_templates_last_word() -> None:
    adapter = template("runtime-adapter", "lane", "- the `lane` facet of `feed`")
    topology, _ = wire(FEED, adapter, node("merge", requires="- `adapter-beta` (via @atomic)"))
    assert {(p, s) for p, _, s in edges(topology) if s == "merge"} == {
        ("runtime-adapter[beta]", "merge")
    }


def test_the_other_needs_of_a_template_are_wired_for_each_mount() -> None:
    clock = node("clock", kind="gateway", maintains="- `now`: the time")
    worker = template("worker", "lane", "- the `lane` facet of `feed`\n- `now` from `clock`")
    topology, found = wire(FEED, clock, worker)
    assert found == []
    assert {s for p, _, s in edges(topology) if p == "clock"} == {
        "worker[alpha]",
        "worker[beta]",
        "worker[gamma]",
    }


@pytest.mark.parametrize(
    ("producer", "need", "why"),
    [
        (node("feed", kind="gateway"), "- the `lane` facet of `feed`", "emits no `lane` facet"),
        (FEED, "- the latest lane data", "no need names a `lane` facet"),
        (FEED, "- the `lane` facet of the feed", "names no producer"),
    ],
)
def test_an_undecided_template_is_mounted_once_with_a_warning(
    producer: tuple[str, str], need: str, why: str
) -> None:
    topology, found = wire(producer, template("worker", "lane", need))
    assert "worker" in [n.name for n in topology.nodes]
    assert [n.instance for n in topology.nodes] == [None, None]
    assert "template_unexpanded" in codes(found)
    assert not any(d.severity.value == "error" for d in found)
    (warning,) = [d for d in found if d.code == "template_unexpanded"]
    assert why in warning.message
    if why == "emits no `lane` facet":
        assert edges(topology) == {("feed", "@atomic", "worker")}


def test_a_template_over_a_template_subscribes_to_its_mounts() -> None:
    log = template("log", "lane", "- the `lane` facet of `worker`", title="Log")
    topology, found = wire(FEED, WORKER, log)
    assert codes(found) == ["template_unexpanded"]
    assert {p for p, _, s in edges(topology) if s == "log"} == {
        "worker[alpha]",
        "worker[beta]",
        "worker[gamma]",
    }


TILL = node("till", kind="gateway", maintains="The `takings` truth: the sales.\n\n- `sales`: x")


@pytest.mark.parametrize("need", ["- `takings`: the day's sales", "- the `takings` truth"])
def test_a_truth_named_in_the_lead_is_a_facet(need: str) -> None:
    topology, found = wire(TILL, node("report", requires=need))
    assert found == []
    assert edges(topology) == {("till", "takings", "report")}


def test_a_truth_name_shared_by_two_producers_is_ambiguous() -> None:
    other = node("other-till", kind="gateway", maintains="The `takings` truth.\n\n- `s`: y")
    topology, found = wire(TILL, other, node("report", requires="- `takings`: the sales"))
    assert codes(found) == ["wiring_ambiguous"]
    assert "other-till.takings" in found[0].message and "till.takings" in found[0].message
    assert edges(topology) == set()


def test_a_lead_that_is_not_the_first_thing_names_nothing() -> None:
    till = node("till", kind="gateway", maintains="- `sales`: x\n\nThe `takings` truth.")
    topology, found = wire(till, node("report", requires="- `takings`: the sales"))
    assert codes(found) == ["wiring_unsatisfied"]
    assert edges(topology) == set()


def test_a_need_on_a_source_that_failed_to_parse_names_it() -> None:
    broken = (
        "src/ledger.prose.md",
        "---\nname: ledger\nkind: [oops\n---\n### Maintains\n- `x`: y\n",
    )
    topology, found = wire(broken, node("audit", requires="- the balances of `ledger`"))
    assert edges(topology) == set()
    (finding,) = found
    assert finding.code == "wiring_unsatisfied"
    assert "`ledger` is defined in `src/ledger.prose.md`, but that file failed to parse" in (
        finding.message
    )
