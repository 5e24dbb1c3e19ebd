"""Evaluate one lowered check against what a test run observed.

A check (from the compiler's `test_checks`, as JSON) names a `target` (a dotted path
into the subject's truth, a node of the test, or a workspace file), an `op` and an
`argument`; `negated` flips the verdict (an Expects Not item). `observed` says what was
there, in a line, so a failure names its evidence.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..postconditions import check as check_postconditions
from ..schemas import check_schema, validate_with

__all__ = ["MISSING", "Observation", "Outcome", "evaluate", "lookup", "shown"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(frozen=True, slots=True, kw_only=True)
class Observation:
    """What a test run left for its checks to read."""

    truth: Any  # the subject's structured truth (MISSING when it never published)
    validator: Mapping[str, Any] | None
    rendered: frozenset[str]  # the nodes with a `rendered` receipt in the last run
    files: Mapping[str, str]  # workspace files of the subject by name (`__error.md`)


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """A check's verdict, what was observed, and who decided (`check` or `judge`)."""

    ok: bool
    observed: str
    decided_by: str = "check"
    evidence: str = ""


def lookup(truth: Any, path: str) -> Any:
    """The value at a dotted path (`decisions.0.action`), or MISSING."""
    if not path:
        return truth
    value = truth
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif (
            isinstance(value, list)
            and part.lstrip("-").isdigit()
            and -len(value) <= int(part) < len(value)
        ):
            value = value[int(part)]
        else:
            return MISSING
    return value


def shown(value: Any, limit: int = 160) -> str:
    if value is MISSING:
        return "not published"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def evaluate(check: Mapping[str, Any], seen: Observation) -> Outcome:
    """The verdict of one deterministic check (never a `judge` one)."""
    ok, observed = _positive(check, seen)
    if check.get("negated"):
        ok = not ok
    return Outcome(ok=ok, observed=observed)


def _positive(check: Mapping[str, Any], seen: Observation) -> tuple[bool, str]:
    op, target = check["op"], str(check["target"])
    arg: Any = check.get("argument")
    if op == "rendered":
        ok = target in seen.rendered
        return ok, f"{target} {'rendered' if ok else 'did not render'} in the last run"
    if op == "error_file":
        text = seen.files.get(target)
        if text is None:
            return False, f"no {target} in the subject's workspace"
        first = next((line for line in text.splitlines() if line.strip()), "")
        return True, f"{target} exists: {first.strip()}"
    value = lookup(seen.truth, target)
    where = f"`{target}`" if target else "the truth"
    if op == "present":
        return value is not MISSING, f"{where} is {shown(value)}"
    if value is MISSING:
        return False, f"{where} is not published"
    if op == "equals":
        return _same(value, arg), f"{where} is {shown(value)}"
    if op == "one_of":
        return any(_same(value, a) for a in arg), f"{where} is {shown(value)}"
    if op == "count":
        low, high = arg
        if not isinstance(value, list | dict | str):
            return False, f"{where} is {shown(value)}, which has no length"
        n = len(value)
        return n >= low and (high is None or n <= high), f"{where} has {n} item{'s' * (n != 1)}"
    if op == "contains":
        return _contains(value, arg), f"{where} is {shown(value)}"
    if op == "before":
        first, second = arg
        if not isinstance(value, list):
            return False, f"{where} is {shown(value)}, not a list"
        i, j = _index(value, first), _index(value, second)
        if i is None or j is None:
            absent = first if i is None else second
            return False, f"{where} has no {shown(absent)}: {shown(value)}"
        return i < j, f"{shown(first)} is item {i + 1} and {shown(second)} item {j + 1}"
    if op == "every_has":
        if not isinstance(value, list):
            return False, f"{where} is {shown(value)}, not a list"
        for position, item in enumerate(value, start=1):
            lacking = [k for k in arg if not isinstance(item, Mapping) or item.get(k) is None]
            if lacking:
                return False, f"item {position} of {where} has no `{lacking[0]}`: {shown(item)}"
        return True, f"all {len(value)} items of {where} have {', '.join(arg)}"
    if op == "schema":
        problem = check_schema(arg)
        if problem is not None:
            return False, f"the schema is not a valid JSON Schema: {problem}"
        found = validate_with(value, arg)
        if found:
            return False, f"{where} at {found[0].path}: {found[0].message}"
        return True, f"{where} matches the schema"
    if op == "postcondition":
        violations = check_postconditions(seen.validator, seen.truth, frozenset())
        if arg:
            violations = [v for v in violations if v.id == arg]
        violations = [v for v in violations if v.kind != "attestation"]
        if violations:
            return False, f"postcondition {violations[0].id}: {violations[0].message}"
        return True, "the postconditions hold"
    raise ValueError(f"unknown check op {op!r}")


def _same(found: Any, want: Any) -> bool:
    if isinstance(found, str) and isinstance(want, str):
        return found.strip() == want.strip()
    if isinstance(found, bool) or isinstance(want, bool):
        return found is want
    if isinstance(found, int | float) and isinstance(want, int | float):
        return float(found) == float(want)
    return bool(found == want)


def _contains(value: Any, want: Any) -> bool:
    if isinstance(value, str):
        return isinstance(want, str) and want.casefold() in value.casefold()
    if isinstance(value, Mapping):
        return isinstance(want, str) and want in value
    if isinstance(value, list):
        return any(_same(item, want) or _nested(item, want) for item in value)
    return False


def _nested(item: Any, want: Any) -> bool:
    """A list of records contains a value when one record holds it as a field."""
    return isinstance(item, Mapping) and any(_same(v, want) for v in item.values())


def _index(items: list[Any], want: Any) -> int | None:
    for position, item in enumerate(items):
        if _same(item, want) or _nested(item, want):
            return position
    return None
