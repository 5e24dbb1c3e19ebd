"""The judge of `prosec test`: a command deciding the assertions that lower to no check.

`[test.judge]` in prose.toml has the shape of an agent render: `command` (a template;
`{prompt_file}` is the prompt's path, else the prompt comes on stdin), `stdin`, `model`,
`env`, `pass_env`, `timeout`. The judge answers on stdout with one JSON object,
`{"verdict": "pass" | "fail", "evidence": "…"}` (or a first line `PASS` / `FAIL` and the
evidence after it). Every verdict is recorded in the test's `judgements.json` keyed by
the assertion and the truth it judged, so `prosec test --judge-replay` reproduces it
without calling anything.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..canonical import canonical_json, token
from ..fsio import atomic_write_bytes
from ..renders.environ import scrubbed
from .checks import MISSING, Outcome

__all__ = ["JUDGEMENTS", "Judge", "JudgeError", "Judgements", "judge_key"]

JUDGEMENTS = "judgements.json"


class JudgeError(ValueError):
    """A judge that is not configured right (exit 2 before any test runs)."""


def judge_key(check: Mapping[str, Any], truth: Any) -> str:
    """What a verdict is recorded under: the assertion, its sense and the truth judged."""
    judged = None if truth is MISSING else truth
    return token({"assertion": check["text"], "negated": bool(check["negated"]), "truth": judged})


@dataclass(slots=True)
class Judgements:
    """The verdicts of one test run, in the order they were given."""

    records: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> Judgements:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:
            raise JudgeError(f"{path}: recorded judgements cannot be read: {exc}") from exc
        records = data.get("judgements") if isinstance(data, dict) else None
        if not isinstance(records, list):
            raise JudgeError(f'{path}: expected {{"judgements": [...]}}')
        return cls([r for r in records if isinstance(r, dict)])

    def find(self, key: str) -> dict[str, Any] | None:
        return next((r for r in self.records if r.get("key") == key), None)

    def write(self, path: Path) -> None:
        atomic_write_bytes(path, canonical_json({"judgements": self.records}) + b"\n")


@dataclass(frozen=True, slots=True, kw_only=True)
class Judge:
    """Runs the configured judge command (None: no judge configured)."""

    argv: tuple[str, ...]
    stdin: bool
    model: str = "unspecified"
    env: Mapping[str, str] = field(default_factory=dict)
    pass_env: tuple[str, ...] = ()
    timeout: float = 300.0
    cwd: Path = Path(".")

    @classmethod
    def from_config(cls, table: Mapping[str, Any], cwd: Path) -> Judge:
        command = table.get("command")
        argv = shlex.split(command) if isinstance(command, str) else list(command or [])
        if not argv:
            raise JudgeError("[test.judge] command: give the judge command to run")
        uses_file = any("{prompt_file}" in arg for arg in argv)
        return cls(
            argv=tuple(argv),
            stdin=bool(table.get("stdin", not uses_file)),
            model=str(table.get("model", "unspecified")),
            env=dict(table.get("env", {})),
            pass_env=tuple(table.get("pass_env", ())),
            timeout=float(table.get("timeout", 300)),
            cwd=cwd,
        )

    def decide(self, check: Mapping[str, Any], truth: Any, subject: str) -> Outcome:
        prompt = _prompt(check, truth, subject)
        with tempfile.TemporaryDirectory(prefix="prosec-judge-") as scratch:
            prompt_file = Path(scratch) / "prompt.md"
            prompt_file.write_text(prompt, encoding="utf-8")
            argv = [arg.replace("{prompt_file}", str(prompt_file)) for arg in self.argv]
            env = {**scrubbed(os.environ, self.pass_env), **self.env}
            try:
                done = subprocess.run(
                    argv,
                    input=prompt.encode("utf-8") if self.stdin else None,
                    capture_output=True,
                    cwd=self.cwd,
                    env=env,
                    timeout=self.timeout,
                    check=False,
                )
            except FileNotFoundError:
                return _undecided(f"the judge command {argv[0]!r} is not found")
            except subprocess.TimeoutExpired:
                return _undecided(f"the judge gave no verdict within {self.timeout:g} s")
        if done.returncode != 0:
            tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
            return _undecided(f"the judge exited with {done.returncode}: {tail[0]}".rstrip(": "))
        return _verdict(done.stdout.decode("utf-8", "replace"))


def _prompt(check: Mapping[str, Any], truth: Any, subject: str) -> str:
    sense = "must NOT hold" if check["negated"] else "must hold"
    shown = "(nothing published)" if truth is MISSING else json.dumps(truth, indent=2)
    return (
        f"# Judge one assertion of a test of `{subject}`\n\n"
        f"Assertion ({sense}): {check['text']}\n\n"
        f"Judge observable behaviour and the contract, not exact phrasing. "
        f"The subject's published truth:\n\n```json\n{shown}\n```\n\n"
        'Answer with one JSON object: {"verdict": "pass" or "fail", "evidence": "…"} '
        "(pass: the assertion, in the sense above, is satisfied).\n"
    )


def _verdict(text: str) -> Outcome:
    stripped = text.strip()
    try:
        data = json.loads(stripped)
    except ValueError:
        first, _, rest = stripped.partition("\n")
        word = first.strip().upper()
        if word in ("PASS", "FAIL"):
            evidence = rest.strip() or first.strip()
            return Outcome(
                ok=word == "PASS", observed=evidence, decided_by="judge", evidence=evidence
            )
        return _undecided(f"the judge's answer is neither JSON nor PASS/FAIL: {first[:80]!r}")
    verdict = data.get("verdict") if isinstance(data, dict) else None
    if verdict not in ("pass", "fail"):
        return _undecided('the judge\'s answer has no "verdict": "pass" or "fail"')
    evidence = str(data.get("evidence", "")).strip()
    return Outcome(ok=verdict == "pass", observed=evidence, decided_by="judge", evidence=evidence)


def _undecided(why: str) -> Outcome:
    return Outcome(ok=False, observed=why, decided_by="error", evidence=why)
