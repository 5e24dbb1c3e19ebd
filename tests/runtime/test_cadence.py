"""Self-driven cadences: ISO 8601 intervals and five-field cron schedules."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prosec.runtime.cadence import PATTERN, Cron, Interval, is_due, parse_cadence
from prosec.runtime.schemas import load_schema, validate


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("PT6H", 21600), ("P1D", 86400), ("P1W", 604800), ("PT1H30M", 5400), ("PT0.5S", 0.5)],
)
def test_interval_cadences(text: str, seconds: float) -> None:
    cadence = parse_cadence(text)
    assert isinstance(cadence, Interval)
    assert cadence.every.total_seconds() == seconds


@pytest.mark.parametrize(
    "bad",
    [
        "P",
        "PT",
        "6h",
        "P1DT",
        "PT0S",
        "",
        "cron:",
        "cron:0 9 * *",
        "cron:60 * * * *",
        "cron:*/0 * * * *",
        "cron:0 9 * * FUNDAY",
    ],
)
def test_bad_cadences_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_cadence(bad)


def test_interval_is_due() -> None:
    now = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
    day = dt.timedelta(days=1)
    daily = parse_cadence("P1D")
    assert is_due(daily, None, now)
    assert is_due(daily, now - day, now)
    assert not is_due(daily, now - dt.timedelta(hours=1), now)


def test_weekday_cron_fires_at_nine_on_weekdays() -> None:
    weekdays = parse_cadence("cron:0 9 * * 1-5")
    assert isinstance(weekdays, Cron)
    friday_noon = dt.datetime(2026, 11, 27, 12, 0, tzinfo=dt.UTC)  # a Friday
    assert weekdays.previous_fire(friday_noon) == friday_noon.replace(hour=9)
    monday_eight = dt.datetime(2026, 11, 30, 8, 0, tzinfo=dt.UTC)
    # Monday before nine: the last fire was Friday 09:00, the weekend never fires
    assert weekdays.previous_fire(monday_eight) == dt.datetime(2026, 11, 27, 9, 0, tzinfo=dt.UTC)
    assert not is_due(weekdays, dt.datetime(2026, 11, 27, 9, 30, tzinfo=dt.UTC), monday_eight)
    assert is_due(
        weekdays, dt.datetime(2026, 11, 27, 9, 30, tzinfo=dt.UTC), monday_eight.replace(hour=9)
    )
    assert is_due(weekdays, None, monday_eight)


def test_cron_lists_steps_names_and_either_day_rule() -> None:
    cadence = parse_cadence("cron:*/15 8-10 1 JAN,JUL MON")
    assert isinstance(cadence, Cron)

    def fires(day: dt.date) -> list[str]:
        """Every fire time on `day`, walking back from its last minute."""
        now = dt.datetime.combine(day, dt.time(23, 59), tzinfo=dt.UTC)
        times = []
        while (fire := cadence.previous_fire(now)) is not None and fire.date() == day:
            times.append(fire.strftime("%H:%M"))
            now = fire - dt.timedelta(minutes=1)
        return sorted(times)

    # every quarter hour from 08:00 to 10:45: the minute and hour lists and steps
    quarters = [f"{h:02}:{m:02}" for h in (8, 9, 10) for m in (0, 15, 30, 45)]
    # day-of-month and weekday both restricted: either matches (the 1st, or any Monday)
    assert fires(dt.date(2026, 1, 1)) == quarters  # a Thursday, but the 1st
    assert fires(dt.date(2026, 1, 5)) == quarters  # a Monday
    assert fires(dt.date(2026, 1, 6)) == []
    assert fires(dt.date(2026, 2, 2)) == []  # a Monday in February
    assert fires(dt.date(2026, 7, 6)) == quarters  # a Monday in July
    assert parse_cadence("cron:0 0 * * 7") == parse_cadence("cron:0 0 * * 0")


@pytest.mark.parametrize(
    ("text", "months", "seconds"),
    [
        ("P1M", 1, 0),
        ("P1Y", 12, 0),
        ("P1Y2M", 14, 0),
        ("P1DT12H", 0, 36 * 3600),
        ("PT15M", 0, 900),
        ("P2W", 0, 14 * 86400),
    ],
)
def test_years_and_months_are_calendar_steps(text: str, months: int, seconds: float) -> None:
    cadence = parse_cadence(text)
    assert isinstance(cadence, Interval)
    assert (cadence.months, cadence.every.total_seconds()) == (months, seconds)


def test_a_month_after_the_31st_is_the_end_of_the_next_month() -> None:
    monthly = parse_cadence("P1M")
    assert isinstance(monthly, Interval)
    last = dt.datetime(2026, 1, 31, 9, 0, tzinfo=dt.UTC)
    assert monthly.next_after(last) == dt.datetime(2026, 2, 28, 9, 0, tzinfo=dt.UTC)
    assert not is_due(monthly, last, dt.datetime(2026, 2, 28, 8, 59, tzinfo=dt.UTC))
    assert is_due(monthly, last, dt.datetime(2026, 2, 28, 9, 0, tzinfo=dt.UTC))
    yearly = parse_cadence("P1Y")
    leap = dt.datetime(2024, 2, 29, tzinfo=dt.UTC)
    assert isinstance(yearly, Interval)
    assert yearly.next_after(leap) == dt.datetime(2025, 2, 28, tzinfo=dt.UTC)


def test_a_cadence_past_year_9999_never_comes_round() -> None:
    far = parse_cadence("P999999Y")
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    assert is_due(far, None, now)  # never rendered: due once
    assert not is_due(far, now - dt.timedelta(days=1), now)


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        ("cron:0 0 31 4 *", "never fires"),  # 31 April
        ("cron:0 0 30 2 *", "never fires"),
        ("cron:0 25 * * *", "hour field '25'"),
        ("cron:0 9 * * 1#2", "weekday field"),  # croniter extensions are not the grammar
        ("cron:0 9 L * *", "day of month field"),
        ("cron:0  9 * * *", "five fields"),
        ("P1DT", "ISO 8601"),
        ("P1000000D", "ISO 8601"),  # at most six digits a number
        ("P1.5D", "ISO 8601"),  # only seconds take a fraction
    ],
)
def test_refusals_say_which_part_is_wrong(bad: str, words: str) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        parse_cadence(bad)


def test_both_schemas_carry_the_grammar() -> None:
    intent = load_schema("compiled-intent.schema.json")
    assert intent["$defs"]["cadence"]["pattern"] == PATTERN
    assert intent["$defs"]["node"]["properties"]["cadence"] == {"$ref": "#/$defs/cadence"}
    config = load_schema("config.schema.json")
    assert config["properties"]["cadence"]["additionalProperties"] == {
        "$ref": "compiled-intent.schema.json#/$defs/cadence"
    }


def _schema_accepts(text: str) -> bool:
    return validate({"cadence": {"node": text}}, "config.schema.json") == []


def _parses(text: str) -> bool:
    try:
        parse_cadence(text)
    except ValueError as exc:
        assert "never fires" in str(exc) or not _schema_accepts(text), (text, str(exc))
        return False
    return True


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.from_regex(PATTERN, fullmatch=True))
def test_every_string_of_the_grammar_parses(text: str) -> None:
    # the only cadences the schema accepts and the parser refuses never fire (31 April)
    assert _schema_accepts(text)
    _parses(text)


_PIECES = ["P", "T", "1", "0", "6", "12", "Y", "M", "W", "D", "H", "S", ".5", "cron:", " "]
_PIECES += ["*", "*/15", "1-5", ",", "MON", "jan", "60", "31", "7", "/0", "#", "L", "-"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join))
def test_what_parses_is_what_the_schema_accepts(text: str) -> None:
    if _parses(text):
        assert _schema_accepts(text), text
