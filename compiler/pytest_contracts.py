"""pytest items for `kind: test` contracts (the prosec plugin collects them when asked).

`pytest --prosec-tests`, or the ini option `prosec_tests = true`, makes every
`*.test.prose.md` file a pytest file whose items are its test contracts. An item runs its
contract as `prosec test` does (a root of its own under a temporary folder) and fails
with the test's report; a contract that cannot be planned (a fixture missing an input)
fails collection with the diagnostics.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .report import render_text

__all__ = ["INI_TESTS", "OPTION", "ContractFile", "ContractItem", "collects"]

INI_TESTS = "prosec_tests"
OPTION = "--prosec-tests"
SUFFIX = ".test.prose.md"


class ContractFailure(Exception):
    """A contract whose test did not pass; the message is its report."""


def collects(config: pytest.Config) -> bool:
    if config.getoption("prosec_tests", default=False):
        return True
    value = config.getini(INI_TESTS)
    return str(value).strip().lower() in ("1", "true", "yes", "on")


class ContractFile(pytest.File):
    """A `*.test.prose.md` file: one item per `kind: test` contract in it."""

    def collect(self) -> Iterator[pytest.Item]:
        from .test_suite import plan_suite

        suite = plan_suite([self.path], base=self.config.rootpath)
        if suite.has_errors:
            raise self.CollectError(
                "prosec cannot run the tests of "
                + str(self.path)
                + ":\n"
                + render_text(suite.diagnostics)
            )
        for test in suite.tests:
            yield ContractItem.from_parent(self, name=test.name, planned=test)


class ContractItem(pytest.Item):
    def __init__(self, *, planned: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.planned = planned
        # no fixtures; some plugins' hook wrappers (pytest-lsp's) expect the attribute
        self.funcargs: dict[str, Any] = {}

    def runtest(self) -> None:
        from .commands.test_formats import evidence_lines
        from .test_suite import Suite, run_suite

        out = Path(tempfile.mkdtemp(prefix="prosec-pytest-"))
        (result,) = run_suite(Suite(tests=[self.planned]), out)
        if result.status == "pass":
            return
        report = Path(result.run) / "report.md" if result.run else None
        if report is not None and report.is_file():
            text = report.read_text(encoding="utf-8")
        else:
            text = "\n".join([f"{result.name}: {result.status}", *evidence_lines(result)])
        raise ContractFailure(text.rstrip())

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ContractFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, max(self.planned.line - 1, 0), f"prosec test {self.name}"
