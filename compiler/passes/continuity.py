"""`### Continuity` → wake source (input | self | external) and an optional cadence."""

from __future__ import annotations

import re
from dataclasses import replace

from prosec.runtime import cadence as runtime_cadence

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..ir import Continuity, Contract, ContractKind, Project, Section, Span, WakeSource

_MODE = re.compile(r"\b(input|self|external)[- ]?driven\b", re.IGNORECASE)
_SELF_MODE = re.compile(r"\bself[- ]?driven\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(not|never|no|nor|without)\b[^.;:]{0,24}$", re.IGNORECASE)
# phrases that state a mode without the `-driven` keyword
_EXTERNAL_HINTS = re.compile(
    r"\b(webhooks?|woken by the outside world|outside trigger|manual kick|external trigger)\b",
    re.IGNORECASE,
)
_SELF_HINTS = re.compile(
    r"\b(every \d+\s*(?:h|m|d|hours?|minutes?|days?|weeks?)|every (?:day|week|weekday|morning|night)"
    r"|daily|hourly|weekly|nightly|its own (?:clock|cadence)|re-?check|re-?validate when stale)\b",
    re.IGNORECASE,
)
_INPUT_HINTS = re.compile(
    r"\b(upstream|when (?:the|its|an?) [\w` -]+ (?:changes|moves)|re-?renders? when)\b",
    re.IGNORECASE,
)

_UNITS = {
    "m": "M",
    "min": "M",
    "minute": "M",
    "h": "H",
    "hr": "H",
    "hour": "H",
    "d": "D",
    "day": "D",
}
_PER_UNIT = {"hour": "PT1H", "day": "P1D", "week": "P1W", "month": "P1M"}
_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "ten": 10,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "a": 1,
    "an": 1,
}
_UNIT = r"(m|min|minutes?|h|hrs?|hours?|d|days?|weeks?|months?)"
# "every 6h", "every two hours", "at least every 24h", "not stale for more than 15 minutes"
_INTERVAL = re.compile(
    r"\b(?:every|more than|longer than|within)\s+(\d+|" + "|".join(_WORDS) + r")\s*"
    r"(?:business\s+|working\s+|calendar\s+)?" + _UNIT + r"\b",
    re.IGNORECASE,
)
# "once per business day", "once a week", "each month"
_PER = re.compile(
    r"\b(?:once\s+)?(?:per|a|each)\s+(?:business\s+|working\s+)?(hour|day|week|month)\b",
    re.IGNORECASE,
)
_PERIODIC = {
    "hourly": "PT1H",
    "daily": "P1D",
    "nightly": "P1D",
    "weekly": "P1W",
    "every day": "P1D",
    "every hour": "PT1H",
    "every week": "P1W",
    "every night": "P1D",
    "monthly": "P1M",
    "every month": "P1M",
}
_DAYS = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
_CALENDAR = re.compile(
    r"\bevery\s+(day|weekday|" + "|".join(_DAYS) + r")\b(?:[^.]*?\bat\s+(\d{1,2}):(\d{2}))?",
    re.IGNORECASE,
)
_CRON = re.compile(r"(?<![\w*/-])((?:[\d*/,-]+\s+){4}[\d*/,A-Za-z-]+)(?![\w*/-])")


def run(project: Project) -> tuple[Project, list[Diagnostic]]:
    """Attach a lowered `Continuity` to every contract; unclear declarations warn."""
    diagnostics: list[Diagnostic] = []
    files = []
    for source in project.files:
        contracts = []
        for contract in source.contracts:
            continuity, found = lower(contract)
            diagnostics.extend(found)
            contracts.append(replace(contract, continuity=continuity))
        files.append(replace(source, contracts=tuple(contracts)))
    return replace(project, files=tuple(files)), diagnostics


def lower(contract: Contract) -> tuple[Continuity, list[Diagnostic]]:
    """One contract's wake source and cadence; the default is documented, never silent."""
    default = WakeSource.EXTERNAL if contract.kind == ContractKind.GATEWAY else WakeSource.INPUT
    sections = contract.sections_named("continuity")
    if not sections:
        cadence, cadence_text = parse_cadence(_schedule_text(contract))
        cadence, cadence_text, refused = _keepable(contract, cadence, cadence_text, None)
        continuity = Continuity(wake_source=default, cadence=cadence, cadence_text=cadence_text)
        return continuity, refused or _unclear_schedule(contract, cadence)
    section = sections[0]
    text = _section_text(section)
    modes = _declared_modes(text)
    if not modes:
        modes = _hinted_modes(text)
    found: list[Diagnostic] = []
    if not modes:
        found.append(
            diag.make(
                "continuity_unclear",
                f"cannot tell the wake source of `{contract.name}`; write `- input-driven`, "
                f"`- self-driven: <cadence>` or `- external-driven` (assuming {default.value})",
                section.heading_span,
            )
        )
        wake = default
    elif WakeSource.EXTERNAL in modes:
        wake = WakeSource.EXTERNAL
    elif WakeSource.SELF in modes:
        wake = WakeSource.SELF
    else:
        wake = WakeSource.INPUT
    cadence, cadence_text = None, None
    stated_in: Section | None = section
    if wake is not WakeSource.INPUT:
        # a cadence is read from the self-driven statements when there are any, so an
        # input-driven bullet's "within one business day" is not taken for a clock
        cadence, cadence_text = parse_cadence(_self_text(section) or text)
        if cadence is None:
            cadence, cadence_text = parse_cadence(_schedule_text(contract))
            stated_in = contract.section("schedule")
    cadence, cadence_text, refused = _keepable(contract, cadence, cadence_text, stated_in)
    found.extend(refused)  # a refusal already says what the runtime cannot keep
    if not refused and wake is WakeSource.EXTERNAL:
        found.extend(_unclear_schedule(contract, cadence))
    elif not refused and wake is WakeSource.SELF and cadence is None:
        found.append(
            diag.make(
                "cadence_missing",
                f"`{contract.name}` is self-driven but states no cadence the runtime can keep; "
                "say `every 6h`, `daily`, `weekly` or a cron expression in `### Continuity`",
                section.heading_span,
            )
        )
    return (
        Continuity(
            wake_source=wake,
            cadence=cadence,
            cadence_text=cadence_text,
            declared=bool(modes),
            span=section.span,
        ),
        found,
    )


def _keepable(
    contract: Contract, cadence: str | None, phrase: str | None, section: Section | None
) -> tuple[str | None, str | None, list[Diagnostic]]:
    """The cadence if the runtime's parser accepts it (it is the one grammar), else none and
    a `cadence_missing` at the section that states it (`section`, else `### Schedule`), so
    the compiler never emits a cadence `run` refuses."""
    if cadence is None:
        return None, None, []
    try:
        runtime_cadence.parse_cadence(cadence)
    except ValueError as exc:
        stated_in = section or contract.section("schedule")
        span: Span = stated_in.heading_span if stated_in is not None else contract.span
        message = (
            f"`{contract.name}` states the cadence `{phrase}`, which the runtime cannot keep "
            f"({exc}); say `every 6h`, `daily`, `monthly` or a valid cron expression"
        )
        return None, None, [diag.make("cadence_missing", message, span)]
    return cadence, phrase, []


def _self_text(section: Section) -> str:
    """The statements of a Continuity section that declare the self-driven mode."""
    if _SELF_MODE.search(_unbold(section.value)):
        return _section_text(section)  # `### Continuity: self-driven` covers the whole body
    parts = [section.value, *(i.text for i in section.body.items)]
    parts += [p.text for p in section.body.paragraphs]
    for item in section.body.items:
        parts.extend(child.text for child in item.children)
    plain = (_unbold(p) for p in parts)
    return "\n".join(p for p in plain if _SELF_MODE.search(p))


def _section_text(section: Section) -> str:
    parts = [section.value, *(i.text for i in section.body.items)]
    parts += [p.text for p in section.body.paragraphs]
    parts += [c.text for c in section.body.clauses]
    for item in section.body.items:
        parts.extend(child.text for child in item.children)
    return _unbold("\n".join(p for p in parts if p))


def _unbold(text: str) -> str:
    """`**input-driven** (default)` → `input-driven (default)`; cron stars stay."""
    return text.replace("**", "").replace("__", "")


def _declared_modes(text: str) -> set[WakeSource]:
    modes = set()
    for match in _MODE.finditer(text):
        if _NEGATION.search(text[max(0, match.start() - 30) : match.start()]):
            continue
        modes.add(WakeSource(match.group(1).lower()))
    return modes


def _hinted_modes(text: str) -> set[WakeSource]:
    modes = set()
    if _EXTERNAL_HINTS.search(text):
        modes.add(WakeSource.EXTERNAL)
    if _SELF_HINTS.search(text):
        modes.add(WakeSource.SELF)
    if _INPUT_HINTS.search(text):
        modes.add(WakeSource.INPUT)
    return modes


def _schedule_text(contract: Contract) -> str:
    parts = []
    for section in contract.sections_named("schedule"):
        parts += [section.value, *(i.text for i in section.body.items)]
        parts += [p.text for p in section.body.paragraphs]
    return "\n".join(parts).replace("`", "")


def _unclear_schedule(contract: Contract, cadence: str | None) -> list[Diagnostic]:
    """A gateway's `### Schedule` that states no time the runtime could keep."""
    schedule = contract.section("schedule")
    if schedule is None or cadence is not None or not _schedule_text(contract).strip():
        return []
    return [
        diag.make(
            "cadence_missing",
            f"the `### Schedule` of `{contract.name}` states no cadence the runtime can keep; "
            "say `every weekday at 09:00`, `hourly` or a cron expression",
            schedule.heading_span,
        )
    ]


def parse_cadence(text: str) -> tuple[str | None, str | None]:
    """A stated cadence → ISO 8601 duration (`PT6H`) or `cron:<expr>`, with its phrase."""
    if not text:
        return None, None
    cron = _CRON.search(text.replace("`", ""))
    if cron and ("cron" in text.lower() or "*" in cron.group(1)):
        expression = " ".join(cron.group(1).rstrip(",.;").split())
        return f"cron:{expression}", cron.group(0).strip().rstrip(",.;")
    interval = _INTERVAL.search(text)
    if interval:
        raw = interval.group(1).lower()
        amount = int(raw) if raw.isdigit() else _WORDS[raw]
        unit = interval.group(2).lower().rstrip("s")
        if unit.startswith("week"):
            return f"P{amount}W", interval.group(0)
        if unit.startswith("month"):
            return f"P{amount}M", interval.group(0)
        letter = _UNITS.get(unit, _UNITS.get(unit[:1], "H"))
        prefix = "P" if letter == "D" else "PT"
        return f"{prefix}{amount}{letter}", interval.group(0)
    calendar = _CALENDAR.search(text)
    if calendar:
        day = calendar.group(1).lower()
        if day == "day" and not calendar.group(2):
            return "P1D", calendar.group(0).strip()
        dow = {"day": "*", "weekday": "1-5"}.get(day) or str(_DAYS.index(day))
        hour, minute = (
            (int(calendar.group(2)), int(calendar.group(3))) if calendar.group(2) else (0, 0)
        )
        return f"cron:{minute} {hour} * * {dow}", calendar.group(0).strip()
    lowered = text.lower()
    for phrase, duration in _PERIODIC.items():
        match = re.search(rf"\b{phrase}\b", lowered)
        if match:
            return duration, text[match.start() : match.end()]
    per = _PER.search(text)
    if per:
        return _PER_UNIT[per.group(1).lower()], per.group(0)
    return None, None
