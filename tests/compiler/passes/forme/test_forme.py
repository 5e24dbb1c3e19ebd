"""Forme: each rung of the ladder, its guards, fan-in, the undecided outcomes, cycles."""

from __future__ import annotations

from pathlib import Path

import pytest
from prosec.compiler.config import Config, WiringPin
from prosec.compiler.ir import Rung, WakeSource

from ...helpers import codes, edges, node, wire

MONITOR = node(
    "monitor",
    maintains="""
    - `name`: the tracked company
    #### funding
    - `events`: funding rounds
    #### hiring
    - `roles`: open roles
    """,
)


def test_every_need_gets_a_resolution() -> None:
    topology, _ = wire(
        MONITOR,
        node("brief", requires="- `funding`: funding moves\n- `weather`: today's weather"),
    )
    statuses = [(r.need.name, r.status) for r in topology.resolutions]
    assert statuses == [("funding", "wired"), ("weather", "unsatisfied")]


def test_named_rung_matches_a_facet() -> None:
    topology, found = wire(MONITOR, node("brief", requires="- `funding`: funding moves"))
    assert edges(topology) == {("monitor", "funding", "brief")}
    assert topology.resolutions[0].rung is Rung.NAMED
    assert found == []


@pytest.mark.parametrize(
    "need",
    [
        "- `rounds`: the `hiring` facet of `monitor`",
        "- `rounds`: from `monitor`, its `hiring` part",
        "- `rounds`: `monitor`'s `hiring` facet",
        "- `rounds`: open roles *(Maintained by `monitor.hiring`.)*",
        "- `rounds`: open roles from **Company Monitor**, `hiring` only",
    ],
)
def test_qualified_forms(need: str) -> None:
    monitor = (MONITOR[0], MONITOR[1].replace("---\n\n", "---\n\n# Company Monitor\n\n", 1))
    topology, _ = wire(monitor, node("desk", requires=need))
    assert edges(topology) == {("monitor", "hiring", "desk")}
    assert topology.resolutions[0].rung is Rung.QUALIFIED


def test_qualified_beats_named() -> None:
    other = node("other", maintains="#### funding\n- `x`: y")
    topology, _ = wire(MONITOR, other, node("brief", requires="- `funding`: from `other`"))
    assert edges(topology) == {("other", "funding", "brief")}


def test_camel_case_world_model_name_qualifies() -> None:
    topology, _ = wire(MONITOR, node("brief", requires="- the current `Monitor` truth"))
    assert edges(topology) == {("monitor", "@atomic", "brief")}


@pytest.mark.parametrize(
    ("need", "producer"),
    [
        ("- `value`: the value", "maker"),  # a Maintains item
        ("- `maker`: whatever it keeps", "maker"),  # the producer's name
        ("- `Values`: the values", "maker"),  # case and plural
        ("- `MakerOutput`: the output", "maker-output"),  # CamelCase world-model name
    ],
)
def test_named_rung_forms(need: str, producer: str) -> None:
    topology, _ = wire(node(producer), node("reader", requires=need))
    assert edges(topology) == {(producer, "@atomic", "reader")}
    assert topology.resolutions[0].rung is Rung.NAMED


def test_facet_family_fans_in() -> None:
    inbox = node(
        "inbox", kind="gateway", maintains="#### email:a\n- `m`: a\n#### email:b\n- `m`: b"
    )
    topology, _ = wire(inbox, node("classifier", requires="- `email`: one email slice"))
    assert edges(topology) == {
        ("inbox", "email:a", "classifier"),
        ("inbox", "email:b", "classifier"),
    }


def test_emits_rung() -> None:
    gateway = node("hook", kind="gateway", maintains="- `payload`: x", extra="### Emits\n\n- sink")
    topology, _ = wire(gateway, node("sink", requires="- `stuff`: whatever arrives"))
    assert edges(topology) == {("hook", "@atomic", "sink")}
    assert topology.resolutions[0].rung is Rung.EMITS


def test_emits_without_needs_still_draws_the_wake() -> None:
    gateway = node("hook", kind="gateway", extra="### Emits\n\n- sink")
    topology, _ = wire(gateway, node("sink"))
    assert edges(topology) == {("hook", "@atomic", "sink")}


def test_emits_naming_no_node_warns() -> None:
    gateway = node("hook", kind="gateway", extra="### Emits\n\n- nowhere")
    _, found = wire(gateway)
    assert codes(found) == ["emits_unknown"]


def test_mentioned_rung_wires_with_an_info() -> None:
    topology, found = wire(
        node("decisions-log", maintains="#### open\n- `items`: x"),
        node("board", requires="- the open facet of the decisions log"),
    )
    assert edges(topology) == {("decisions-log", "open", "board")}
    assert topology.resolutions[0].rung is Rung.MENTIONED
    assert codes(found) == ["wiring_mentioned"]


def test_negated_names_name_nothing() -> None:
    topology, _ = wire(
        MONITOR,
        node(
            "brief", requires="- the `funding` facet of `monitor` (NOT `hiring`, never `@atomic`)"
        ),
    )
    assert edges(topology) == {("monitor", "funding", "brief")}


def test_atomic_forces_the_whole_truth() -> None:
    topology, _ = wire(MONITOR, node("brief", requires="- `monitor` (via `@atomic`) — everything"))
    assert edges(topology) == {("monitor", "@atomic", "brief")}


def test_html_entities_are_unescaped() -> None:
    topology, _ = wire(
        MONITOR, node("brief", requires="- `x`: the `hiring` facet of `monitor` &amp; co")
    )
    assert edges(topology) == {("monitor", "hiring", "brief")}


def test_a_node_never_subscribes_to_itself() -> None:
    topology, found = wire(node("watch", requires="- prior `Watch` (self, by reference)"))
    assert edges(topology) == set()
    assert topology.resolutions[0].status == "self"
    assert codes(found) == ["wiring_self"]


def test_caller_inputs_are_not_wired() -> None:
    topology, found = wire(
        node(
            "inspector",
            requires="- `subject`: run — a completed run\n- `seed`: supplied by the caller",
        )
    )
    assert [r.status for r in topology.resolutions] == ["caller", "caller"]
    assert found == []


def test_ambiguous_need_lists_candidates_and_stays_unwired() -> None:
    topology, found = wire(
        node("a", maintains="- `forecast`: x"),
        node("b", maintains="- `forecast`: y"),
        node("plan", requires="- `forecast`: demand"),
    )
    assert edges(topology) == set()
    resolution = topology.resolutions[0]
    assert resolution.status == "ambiguous"
    assert resolution.candidates == ("a.@atomic", "b.@atomic")
    assert codes(found) == ["wiring_ambiguous"]


@pytest.mark.parametrize(
    "need", ["- `forecast`: every forecast there is", "- all forecasts from `a` and `b`"]
)
def test_asking_for_many_fans_in(need: str) -> None:
    topology, found = wire(
        node("a", maintains="- `forecast`: x"),
        node("b", maintains="- `forecast`: y"),
        node("plan", requires=need),
    )
    assert edges(topology) == {("a", "@atomic", "plan"), ("b", "@atomic", "plan")}
    assert found == []


def test_unsatisfied_suggests_the_nearest_producers() -> None:
    topology, found = wire(
        node("spend-ledger"), node("review", requires="- `spend-total`: the spend so far")
    )
    assert topology.resolutions[0].candidates == ("spend-ledger",)
    assert codes(found) == ["wiring_unsatisfied"]


def test_strict_turns_wiring_warnings_into_errors() -> None:
    from prosec.compiler.lint import apply_policy

    _, found = wire(node("review", requires="- `nothing`: nowhere"))
    strict = apply_policy(found, Config(strict=True))
    assert [d.severity.value for d in strict] == ["error"]


def test_named_facet_that_does_not_exist_is_an_error() -> None:
    topology, found = wire(MONITOR, node("brief", requires="- the `payroll` facet of `monitor`"))
    assert edges(topology) == set()
    assert codes(found) == ["facet_not_emitted"]
    _, found = wire(MONITOR, node("brief", requires="- `x`: from `monitor.payroll`"))
    assert codes(found) == ["facet_not_emitted"]


def test_pin_overrides_and_settles() -> None:
    pin = WiringPin(subscriber="plan", need="forecast", producer="b", facet="@atomic")
    topology, found = wire(
        node("a", maintains="- `forecast`: x"),
        node("b", maintains="- `forecast`: y"),
        node("plan", requires="- `forecast`: demand"),
        config=Config(pins=(pin,)),
    )
    assert edges(topology) == {("b", "@atomic", "plan")}
    assert topology.resolutions[0].rung is Rung.PINNED
    assert found == []


@pytest.mark.parametrize(
    "pin",
    [
        WiringPin(subscriber="ghost", need="forecast", producer="a"),
        WiringPin(subscriber="plan", need="weather", producer="a"),
        WiringPin(subscriber="plan", need="forecast", producer="ghost"),
        WiringPin(subscriber="plan", need="forecast", producer="a", facet="missing"),
    ],
)
def test_stale_pins_are_errors(pin: WiringPin) -> None:
    _, found = wire(
        node("a", maintains="- `forecast`: x"),
        node("plan", requires="- `forecast`: demand"),
        config=Config(pins=(pin,), path=Path("prose.toml")),
    )
    assert codes(found) == ["pin_stale"]
    assert found[0].span.path == "prose.toml"


def test_pin_by_position_and_by_text() -> None:
    for reference in ("#1", "demand"):
        pin = WiringPin(subscriber="plan", need=reference, producer="a")
        topology, _ = wire(
            node("a", maintains="- `other`: x"),
            node("plan", requires="- what the demand will be"),
            config=Config(pins=(pin,)),
        )
        assert edges(topology) == {("a", "@atomic", "plan")}


def test_cycle_is_an_error_naming_its_path() -> None:
    topology, found = wire(
        node("a", maintains="- `x`: a", requires="- `y`: from `b`"),
        node("b", maintains="- `y`: b", requires="- `x`: from `a`"),
    )
    assert not topology.acyclic
    assert topology.cycle == ("a", "b", "a")
    assert codes(found) == ["wiring_cycle"]
    assert "`a` → `b` → `a`" in found[0].message


def test_entry_points_are_the_external_nodes() -> None:
    topology, _ = wire(
        node("hook", kind="gateway"),
        node("ext", extra="### Continuity\n\n- external-driven: a manual kick"),
        node("inner"),
    )
    assert topology.entry_points == ("ext", "hook")
    assert {n.name: n.wake_source for n in topology.nodes}["inner"] is WakeSource.INPUT


def test_functions_and_tests_are_never_nodes() -> None:
    topology, _ = wire(
        node("helper", kind="function", maintains="", extra="### Returns\n\n- `r`: x"),
        node("check", kind="test", maintains="", extra="### Expects\n\n- ok"),
        node("real"),
    )
    assert [n.name for n in topology.nodes] == ["real"]
