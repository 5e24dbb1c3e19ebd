"""The browser tier (`make test-browser`): Playwright driving Debian's Chromium.

Chromium must be at /usr/bin/chromium (or $PROSEC_CHROMIUM): a missing browser FAILS
every test here, loudly, never skips them. Playwright's own browser downloads are never
used. Screenshots go to tests/artifacts/ (ignored by git).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM = Path(os.environ.get("PROSEC_CHROMIUM", "/usr/bin/chromium"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if (
            Path(str(item.fspath)).is_relative_to(here)
            and item.get_closest_marker("browser") is None
        ):
            raise pytest.UsageError(
                f"{item.nodeid}: every test under tests/browser is marked browser"
            )


@pytest.fixture(scope="session")
def chromium() -> Path:
    if not CHROMIUM.is_file() or not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"Chromium is missing at {CHROMIUM}: the browser tier needs it "
            "(`apt-get install -y chromium`, or set PROSEC_CHROMIUM)",
            pytrace=False,
        )
    return CHROMIUM


@pytest.fixture(scope="session")
def browser(chromium: Path) -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is missing: pip install 'prosec[browser]'", pytrace=False)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(chromium),
            args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    # the tests poll with page functions, which the page's CSP (no eval) would refuse
    context = browser.new_context(viewport={"width": 1400, "height": 820}, bypass_csp=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    # nothing is fetched from a CDN: every request the page makes goes to the server
    elsewhere: list[str] = []
    page.on(
        "request",
        lambda request: (
            None
            if request.url.startswith(("http://127.0.0.1:", "data:", "about:"))
            else elsewhere.append(request.url)
        ),
    )
    page.set_default_timeout(20_000)
    try:
        yield page
    finally:
        context.close()
    assert not errors, f"the page raised: {errors}"
    assert not elsewhere, f"the page fetched from elsewhere: {elsewhere}"


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
