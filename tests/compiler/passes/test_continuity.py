"""Continuity lowering: every form the upstream corpus writes, and the unclear ones."""

from __future__ import annotations

import pytest
from prosec.compiler.diagnostics import Diagnostic
from prosec.compiler.ir import Continuity, WakeSource
from prosec.compiler.parse import parse_source
from prosec.compiler.passes.continuity import lower, parse_cadence
from prosec.runtime import cadence as runtime_cadence

INPUT, SELF, EXTERNAL = WakeSource.INPUT, WakeSource.SELF, WakeSource.EXTERNAL


def lowered(
    body: str, kind: str = "responsibility", extra: str = ""
) -> tuple[Continuity, list[str]]:
    text = f"---\nname: n\nkind: {kind}\n---\n\n{body}\n{extra}"
    source, found = parse_source("src/n.prose.md", text)
    assert found == []
    continuity, diagnostics = lower(source.contracts[0])
    return continuity, [d.code for d in diagnostics]


FORMS = [
    # (Continuity section as written, wake source, cadence)
    ("### Continuity\n\n- external-driven", EXTERNAL, None),
    ("### Continuity: external-driven", EXTERNAL, None),
    ("### Continuity\n\nexternal-driven\n\nThe outside world wakes it.", EXTERNAL, None),
    ("### Continuity\n\n- external-driven: wake when a new ticket arrives.", EXTERNAL, None),
    ("### Continuity\n\n- input-driven", INPUT, None),
    ("### Continuity: input-driven", INPUT, None),
    ("### Continuity\n\ninput-driven", INPUT, None),
    (
        "### Continuity\n\n- input-driven: wake when the ledger changes. Do NOT read peers.",
        INPUT,
        None,
    ),
    ("### Continuity\n\n- **input-driven**: a moved `rollup` facet wakes it.", INPUT, None),
    ("### Continuity\n\n**input-driven** (default): new receipts wake it.", INPUT, None),
    ("### Continuity\n\nInput-driven. Skip when the lane facet is unchanged.", INPUT, None),
    ("### Continuity\n\ninput-driven, off the three sub-syntheses.", INPUT, None),
    (
        "### Continuity\n\ninput-driven | Woken by an `input` wake and by a `self` re-tick.",
        INPUT,
        None,
    ),
    ("### Continuity\n\n- self-driven: re-check every 6h", SELF, "PT6H"),
    ("### Continuity\n\n- self-driven: re-check on a daily forecast cadence.", SELF, "P1D"),
    (
        "### Continuity\n\n- input-driven (default): new signals wake it.\n"
        "- self-driven: re-check every 6h so a lapse flips the facet",
        SELF,
        "PT6H",
    ),
    (
        "### Continuity\n\n- self-driven: review at least weekly during audits and at least "
        "monthly otherwise\n- input-driven: failed checks wake a review",
        SELF,
        "P1W",
    ),
    ("### Continuity\n\n- self-driven: re-examine at least every 24h", SELF, "PT24H"),
    (
        "### Continuity\n\n- self-driven: review the signals every Monday morning",
        SELF,
        "cron:0 0 * * 1",
    ),
    (
        "### Continuity\n\n- input-driven: alerts wake it\n- self-driven: re-check so the "
        "brief does not go stale for more than fifteen minutes",
        SELF,
        "PT15M",
    ),
    (
        "### Continuity\n\n- input-driven: triage items before they are more than one business "
        "day old\n- self-driven: re-review at least once per business day",
        SELF,
        "P1D",
    ),
    ("### Continuity: self-driven\n\n- re-check weekly", SELF, "P1W"),
    ("### Continuity\n\nThis node is self-driven: it re-checks every 30 minutes.", SELF, "PT30M"),
    (
        "### Continuity\n\n- self-driven: every day at 18:00, cron `0 18 * * *`, rebuild",
        SELF,
        "cron:0 18 * * *",
    ),
    (
        "### Continuity\n\n- self-driven: every day at 18:00 rebuild the list",
        SELF,
        "cron:0 18 * * *",
    ),
    ("### Continuity\n\n- self-driven: every two hours", SELF, "PT2H"),
    ("### Continuity\n\n- input-driven, not self-driven", INPUT, None),
]


@pytest.mark.parametrize(("body", "wake", "cadence"), FORMS)
def test_forms(body: str, wake: WakeSource, cadence: str | None) -> None:
    continuity, codes = lowered(body)
    assert (continuity.wake_source, continuity.cadence, continuity.declared) == (
        wake,
        cadence,
        True,
    )
    assert codes == []


def test_input_statements_never_set_a_cadence() -> None:
    continuity, _ = lowered("### Continuity\n\n- input-driven: review within one business day")
    assert (continuity.wake_source, continuity.cadence) == (INPUT, None)


def test_cadence_text_is_the_phrase_read() -> None:
    continuity, _ = lowered("### Continuity\n\n- self-driven: re-check every 6h from the tables")
    assert continuity.cadence_text == "every 6h"


@pytest.mark.parametrize(
    ("schedule", "cadence"),
    [
        ("- Every weekday at 08:30 local time.", "cron:30 8 * * 1-5"),
        ("- Every Monday at 09:00 local time the clock advances.", "cron:0 9 * * 1"),
        ("- `cron`: 0 9 * * 1\n- `timezone`: Europe/Lisbon", "cron:0 9 * * 1"),
        ("A sweep runs every four hours, cron `0 */4 * * *`, too.", "cron:0 */4 * * *"),
    ],
)
def test_gateway_schedule(schedule: str, cadence: str) -> None:
    continuity, codes = lowered(
        "### Continuity\n\n- external-driven", "gateway", f"\n### Schedule\n\n{schedule}\n"
    )
    assert (continuity.wake_source, continuity.cadence, codes) == (EXTERNAL, cadence, [])


def test_gateway_with_a_self_tick_stays_external() -> None:
    continuity, _ = lowered(
        "### Continuity\n\n- external-driven: a new message wakes it.\n"
        "- self-driven: a weekly clock tick advances the `week` facet.",
        "gateway",
    )
    assert (continuity.wake_source, continuity.cadence) == (EXTERNAL, "P1W")


def test_defaults_without_a_section() -> None:
    responsibility, codes = lowered("### Maintains\n\n- `x`: y")
    assert (responsibility.wake_source, responsibility.declared, codes) == (INPUT, False, [])
    gateway, _ = lowered("### Maintains\n\n- `x`: y", "gateway")
    assert (gateway.wake_source, gateway.declared) == (EXTERNAL, False)


def test_unclear_continuity_warns_and_says_the_default() -> None:
    continuity, codes = lowered(
        "### Continuity\n\nNew stargazers should not remain unattended for long."
    )
    assert codes == ["continuity_unclear"]
    assert (continuity.wake_source, continuity.declared) == (INPUT, False)


@pytest.mark.parametrize(
    "body",
    [
        "### Continuity\n\n- self-driven: when the mood strikes",
        "### Continuity\n\n- input-driven: moves wake it\n- self-driven: read the prior "
        "model by reference",
        "### Continuity\n\nInput-driven off the corpus, plus a self-driven recheck.",
    ],
)
def test_self_driven_without_cadence_is_reported(body: str) -> None:
    continuity, codes = lowered(body)
    assert (continuity.wake_source, continuity.cadence) == (SELF, None)
    assert codes == ["cadence_missing"]


def test_diagnostic_points_at_the_heading() -> None:
    text = "---\nname: n\nkind: responsibility\n---\n\n### Continuity\n\n- whenever\n"
    source, _ = parse_source("src/n.prose.md", text)
    _, found = lower(source.contracts[0])
    (diagnostic,) = found
    assert isinstance(diagnostic, Diagnostic)
    assert (diagnostic.span.line, diagnostic.span.column, diagnostic.span.end_column) == (6, 1, 15)


@pytest.mark.parametrize(
    ("text", "cadence"),
    [
        ("every 15 min", "PT15M"),
        ("every 3 days", "P3D"),
        ("every 2 weeks", "P2W"),
        ("hourly", "PT1H"),
        ("nightly", "P1D"),
        ("monthly", "P1M"),
        ("once a week", "P1W"),
        ("every friday at 17:30", "cron:30 17 * * 5"),
        ("cron 5 4 * * sun", "cron:5 4 * * sun"),
        ("when it feels right", None),
        ("", None),
    ],
)
def test_parse_cadence(text: str, cadence: str | None) -> None:
    assert parse_cadence(text)[0] == cadence


def test_gateway_schedule_without_a_time_is_reported() -> None:
    continuity, codes = lowered(
        "### Continuity\n\n- external-driven",
        "gateway",
        "\n### Schedule\n\n- a scheduled scan of the corpus\n",
    )
    assert (continuity.wake_source, continuity.cadence, codes) == (
        EXTERNAL,
        None,
        ["cadence_missing"],
    )


# what the pass emits is checked by the runtime's parser, the one cadence grammar
@pytest.mark.parametrize(
    "cadence", sorted({c for _, _, c in FORMS if c} | {"P1M", "cron:5 4 * * sun"})
)
def test_every_emitted_cadence_is_one_the_runtime_keeps(cadence: str) -> None:
    runtime_cadence.parse_cadence(cadence)


def test_monthly_lowers_to_a_calendar_month() -> None:
    continuity, codes = lowered("### Continuity\n\n- self-driven: monthly")
    assert (continuity.cadence, codes) == ("P1M", [])
    parsed = runtime_cadence.parse_cadence("P1M")
    assert isinstance(parsed, runtime_cadence.Interval) and parsed.months == 1
    assert lowered("### Continuity\n\n- self-driven: every 2 months")[0].cadence == "P2M"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("### Continuity\n\n- self-driven: every 0 days", "longer than zero"),
        ("### Continuity\n\n- self-driven: every monday at 25:00", "hour field '25'"),
        ("### Continuity\n\n- self-driven: cron `0 0 31 2 *`", "never fires"),
    ],
)
def test_a_cadence_the_runtime_refuses_is_reported_not_emitted(body: str, reason: str) -> None:
    text = f"---\nname: n\nkind: responsibility\n---\n\n{body}\n"
    source, _ = parse_source("src/n.prose.md", text)
    continuity, found = lower(source.contracts[0])
    assert (continuity.wake_source, continuity.cadence, continuity.cadence_text) == (
        SELF,
        None,
        None,
    )
    (diagnostic,) = found
    assert diagnostic.code == "cadence_missing" and reason in diagnostic.message
    assert diagnostic.span.line == 6  # the `### Continuity` heading


def test_a_refused_gateway_schedule_is_reported_once_at_the_schedule() -> None:
    text = (
        "---\nname: n\nkind: gateway\n---\n\n### Continuity\n\n- external-driven\n\n"
        "### Schedule\n\n- cron `0 0 30 2 *`\n"
    )
    source, _ = parse_source("src/n.prose.md", text)
    continuity, found = lower(source.contracts[0])
    assert (continuity.wake_source, continuity.cadence) == (EXTERNAL, None)
    assert [(d.code, d.span.line) for d in found] == [("cadence_missing", 10)]
