"""Self-driven cadences: ISO 8601 intervals and five-field cron schedules."""

from __future__ import annotations

import datetime as dt

import pytest
from prosec.runtime.cadence import Cron, Interval, is_due, parse_cadence


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
