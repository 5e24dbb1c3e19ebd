"""`make bench` ends with every aim of issue 14, its figure and PASS / MISS."""

from __future__ import annotations

import pytest

from .aims import table


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    terminalreporter.section("issue 14 aims")
    for text in table():
        terminalreporter.write_line(text)
