"""Self-driven cadences, the one grammar: ISO 8601 durations (`PT6H`, `P1M`) and `cron:` schedules.

A duration is `P[nY][nM][nW][nD][T[nH][nM][n[.f]S]]`, longer than zero, each number at
most six digits; years and months are calendar steps (31 January + `P1M` is the last
day of February), the other parts fixed lengths. A schedule is `cron:` and the five
fields minute, hour, day of month, month and weekday (0 or 7 is Sunday), each a comma
list of `*`, a number or name, or a range, with an optional `/step`; croniter iterates it.

`PATTERN` is this grammar as one regular expression. The compiled-intent schema's
`$defs/cadence` carries the same string (a test keeps them equal), so a cadence the
schema accepts is one this module parses, unless its schedule never fires.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PATTERN", "Cadence", "Cron", "Interval", "is_due", "parse_cadence"]

_N = r"\d{1,6}"
_DURATION = (
    rf"(?=P.*[1-9])P(?=\d|T\d)(?:{_N}Y)?(?:{_N}M)?(?:{_N}W)?(?:{_N}D)?"
    rf"(?:T(?=\d)(?:{_N}H)?(?:{_N}M)?(?:{_N}(?:\.\d{{1,9}})?S)?)?"
)
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")


def _names(names: tuple[str, ...]) -> str:
    return "|".join(form for name in names for form in (name, name.lower(), name.title()))


# (field name, its values as a regular expression)
_FIELDS = (
    ("minute", r"[0-5]?[0-9]"),
    ("hour", r"[01]?[0-9]|2[0-3]"),
    ("day of month", r"0?[1-9]|[12][0-9]|3[01]"),
    ("month", r"0?[1-9]|1[0-2]|" + _names(_MONTHS)),
    ("weekday", r"0?[0-7]|" + _names(_DAYS)),
)


def _field(values: str) -> str:
    item = rf"(?:\*|(?:{values})(?:-(?:{values}))?)(?:/[1-9][0-9]{{0,2}})?"
    return rf"{item}(?:,{item})*"


_CRON = "cron:" + " ".join(_field(values) for _, values in _FIELDS)
PATTERN = f"^(?:{_DURATION}|{_CRON})$"


# compiled on first use: every `prosec lint` imports this module, few meet a cadence
@functools.cache
def _grammar() -> re.Pattern[str]:
    return re.compile(PATTERN)


@functools.cache
def _field_grammar() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(_field(values)) for _, values in _FIELDS)


@functools.cache
def _parts() -> re.Pattern[str]:
    return re.compile(
        r"P(?:(?P<years>\d+)Y)?(?:(?P<months>\d+)M)?(?:(?P<weeks>\d+)W)?(?:(?P<days>\d+)D)?"
        r"(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>[\d.]+)S)?)?"
    )


_REFERENCE = dt.datetime(2000, 1, 1)  # where a schedule is probed for ever firing


@dataclass(frozen=True, slots=True)
class Interval:
    """Due when `months` calendar months and then `every` have passed since the last render."""

    every: dt.timedelta
    months: int = 0

    def next_after(self, last: dt.datetime) -> dt.datetime | None:
        """When the cadence comes round after `last`; None when that is past year 9999."""
        try:
            if self.months:
                from dateutil.relativedelta import relativedelta

                last = last + relativedelta(months=self.months)
            return last + self.every
        except (OverflowError, ValueError):
            return None

    def due(self, last: dt.datetime | None, now: dt.datetime) -> bool:
        if last is None:
            return True
        following = self.next_after(last)
        return following is not None and now >= following


@dataclass(frozen=True, slots=True)
class Cron:
    """Due when a fire time of the schedule lies after the last self-render.

    Times are read in the time zone of `now` (the CLI passes the machine's local time,
    so `0 9 * * 1-5` is 09:00 on weekdays where prosec runs). Two schedules that fire
    at the same times compare equal (`fields` is croniter's expansion)."""

    expression: str = field(compare=False)
    fields: tuple[tuple[Any, ...], ...]

    def previous_fire(self, now: dt.datetime) -> dt.datetime | None:
        """The latest fire time at or before `now`, else None."""
        from croniter import CroniterBadDateError, croniter

        # croniter's get_prev is strictly before its start: start just after this minute
        start = now.replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
        try:
            fire: dt.datetime = croniter(self.expression, start).get_prev(dt.datetime)
        except CroniterBadDateError:
            return None
        return fire

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


@functools.lru_cache(maxsize=1024)
def parse_cadence(text: str) -> Cadence:
    """`PT6H` / `P1D` / `P1M` → Interval; `cron:M H DOM MON DOW` → Cron; else ValueError."""
    if text.startswith("cron:"):
        return _parse_cron(text)
    if _grammar().fullmatch(text) is None:
        raise ValueError(
            f"cadence {text!r} is neither an ISO 8601 duration longer than zero, such as "
            "'PT6H', 'P1D' or 'P1M', nor 'cron:<minute> <hour> <day> <month> <weekday>'"
        )
    parts = _parts().fullmatch(text)
    assert parts is not None  # the grammar matched
    amounts = {k: float(v) for k, v in parts.groupdict().items() if v is not None}
    months = int(amounts.pop("years", 0)) * 12 + int(amounts.pop("months", 0))
    return Interval(dt.timedelta(**amounts), months)


def is_due(cadence: Cadence, last: dt.datetime | None, now: dt.datetime) -> bool:
    """A self-driven node is due when it never self-rendered or its cadence came round."""
    return cadence.due(last, now)


def _parse_cron(text: str) -> Cron:
    expression = text.removeprefix("cron:")
    fields = expression.split(" ")
    if len(fields) != len(_FIELDS) or not all(fields):
        raise ValueError(
            f"cadence {text!r}: a cron schedule is five fields separated by single spaces "
            "(minute hour day-of-month month weekday)"
        )
    for (name, _), grammar, value in zip(_FIELDS, _field_grammar(), fields, strict=True):
        if grammar.fullmatch(value) is None:
            raise ValueError(
                f"cadence {text!r}: the {name} field {value!r} is not a list of `*`, values, "
                "ranges and `/step`s within the field's bounds"
            )
    assert _grammar().fullmatch(text) is not None  # the fields are the grammar
    from croniter import CroniterBadDateError, CroniterError, croniter

    try:
        schedule = croniter(expression, _REFERENCE)
        schedule.get_next(dt.datetime)
    except CroniterBadDateError:
        raise ValueError(f"cadence {text!r}: the schedule never fires") from None
    except CroniterError as exc:
        raise ValueError(f"cadence {text!r}: {exc}") from None
    expanded = tuple(tuple(values) for values in schedule.expanded)
    return Cron(expression, expanded)
