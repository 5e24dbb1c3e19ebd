"""The browser tier fails, loudly, when Chromium is missing: it never skips."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from .conftest import REPO

pytestmark = pytest.mark.slow


def test_the_browser_tier_fails_without_chromium() -> None:
    env = {**os.environ, "PROSEC_CHROMIUM": str(REPO / "no-such-chromium")}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:xdist",
            "-m",
            "browser",
            "-k",
            "dag",
            "tests/browser",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Chromium is missing at" in result.stdout
    assert "skipped" not in result.stdout.splitlines()[-1]
    assert "1 error" in result.stdout.splitlines()[-1]
