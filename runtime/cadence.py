"""Self-driven cadences: ISO 8601 intervals (`PT6H`) and five-field cron (`cron:0 9 * * 1-5`)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

__all__ = ["Cron", "Interval", "is_due", "parse_cadence"]

_DURATION = re.compile(
    r"^P(?:(?P<weeks>\d+)W)?(?:(?P<days>\d+)D)?"
    r"(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?$"
)
_NAMES = {
    **{name: i for i, name in enumerate(("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"))},
    **{
        name: i + 1
        for i, name in enumerate(
            ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
        )
    },
}
# (low, high) of minute, hour, day of month, month, day of week (7 is Sunday too)
_BOUNDS = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))
_FIELDS = ("minute", "hour", "day of month", "month", "day of week")
_LOOKBACK_DAYS = 400  # a schedule that fires at least once a year is found


@dataclass(frozen=True, slots=True)
class Interval:
    """Due when `every` has passed since the last self-render."""

    every: dt.timedelta

    def due(self, last: dt.datetime | None, now: dt.datetime) -> bool:
        return last is None or now >= last + self.every


@dataclass(frozen=True, slots=True)
class Cron:
    """Due when a fire time of the schedule lies after the last self-render.

    Times are read in the time zone of `now` (the CLI passes the machine's local time,
    so `0 9 * * 1-5` is 09:00 on weekdays where prosec runs)."""

    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    days_restricted: bool
    weekdays_restricted: bool

    def _day_matches(self, day: dt.date) -> bool:
        if day.month not in self.months:
            return False
        by_date = day.day in self.days
        by_weekday = (day.isoweekday() % 7) in self.weekdays
        if self.days_restricted and self.weekdays_restricted:
            return by_date or by_weekday  # cron's rule: either restriction may match
        return by_date and by_weekday

    def previous_fire(self, now: dt.datetime) -> dt.datetime | None:
        """The latest fire time at or before `now` (within about a year), else None."""
        minutes = sorted(self.minutes, reverse=True)
        hours = sorted(self.hours, reverse=True)
        for offset in range(_LOOKBACK_DAYS):
            day = now.date() - dt.timedelta(days=offset)
            if not self._day_matches(day):
                continue
            for hour in hours:
                if offset == 0 and hour > now.hour:
                    continue
                for minute in minutes:
                    if offset == 0 and hour == now.hour and minute > now.minute:
                        continue
                    return dt.datetime.combine(day, dt.time(hour, minute), tzinfo=now.tzinfo)
        return None

    def due(self, last: dt.datetime | None, now: dt.datetime) -> bool:
        fire = self.previous_fire(now)
        if fire is None:
            return False
        if last is None:
            return True
        if now.tzinfo is not None and last.tzinfo is not None:
            last = last.astimezone(now.tzinfo)
        return fire > last


Cadence = Interval | Cron


def parse_cadence(text: str) -> Cadence:
    """`PT6H` / `P1D` / `P1W` → Interval; `cron:M H DOM MON DOW` → Cron; else ValueError."""
    if text.startswith("cron:"):
        return _parse_cron(text[len("cron:") :])
    match = _DURATION.match(text)
    if match is None or text in ("P", "PT") or text.endswith("T"):
        raise ValueError(
            f"cadence {text!r} is neither an ISO 8601 duration like 'PT6H' or 'P1D' "
            "nor 'cron:<minute> <hour> <day> <month> <weekday>'"
        )
    parts = {k: float(v) for k, v in match.groupdict().items() if v is not None}
    every = dt.timedelta(**parts)
    if every.total_seconds() <= 0:
        raise ValueError(f"cadence {text!r} must be longer than zero")
    return Interval(every)


def is_due(cadence: Cadence, last: dt.datetime | None, now: dt.datetime) -> bool:
    """A self-driven node is due when it never self-rendered or its cadence came round."""
    return cadence.due(last, now)


def _parse_cron(expression: str) -> Cron:
    fields = expression.split()
    if len(fields) != 5:
        raise ValueError(f"cron {expression!r} needs five fields (minute hour day month weekday)")
    sets = [_field(value, index) for index, value in enumerate(fields)]
    weekdays = frozenset(d % 7 for d in sets[4])  # 7 is Sunday as well as 0
    return Cron(
        minutes=sets[0],
        hours=sets[1],
        days=sets[2],
        months=sets[3],
        weekdays=weekdays,
        days_restricted=fields[2] != "*",
        weekdays_restricted=fields[4] != "*",
    )


def _field(text: str, index: int) -> frozenset[int]:
    low, high = _BOUNDS[index]
    values: set[int] = set()
    for part in text.split(","):
        body, _, step_text = part.partition("/")
        step = _number(step_text, index) if step_text else 1
        if step < 1:
            raise ValueError(f"cron {_FIELDS[index]} step must be at least 1 in {text!r}")
        if body == "*":
            start, end = low, high
        elif "-" in body:
            first, _, last = body.partition("-")
            start, end = _number(first, index), _number(last, index)
        else:
            start = _number(body, index)
            end = high if step_text else start
        if not (low <= start <= high and low <= end <= high and start <= end):
            raise ValueError(f"cron {_FIELDS[index]} {part!r} is outside {low}-{high}")
        values.update(range(start, end + 1, step))
    return frozenset(values)


def _number(text: str, index: int) -> int:
    upper = text.upper()
    if upper in _NAMES and index in (3, 4):
        return _NAMES[upper]
    if not text.isdigit():
        raise ValueError(f"cron {_FIELDS[index]} {text!r} is not a number")
    return int(text)
