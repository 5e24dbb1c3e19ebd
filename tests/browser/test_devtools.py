"""The devtools in a real browser: the newsroom demo's ledger under `prosec serve`, and an
upstream fixture under `prosec devtools` (conformance: it reads $UPSTREAM)."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..conftest import CORPUS, prosec_bin
from ..runtime.http.harness import ServeProcess
from ..runtime.project import Project as Root
from ..runtime.project import intent

pytestmark = pytest.mark.browser

TRIGGERS = [
    '{"breaking": ["Bridge reopens"], "features": ["A day with the ferry crew"], "received_at": "08:00"}',
    '{"breaking": ["Storm warning", "Bridge reopens"], "features": ["A day with the ferry crew"], "received_at": "09:00"}',
    '{"breaking": ["Storm warning", "Bridge reopens"], "features": ["A day with the ferry crew"], "received_at": "09:05"}',
]
BREAKING = ("wire-feed", "breaking", "breaking-desk")
FEATURES = ("wire-feed", "features", "features-desk")


def _prosec(root: Path, *args: str) -> None:
    result = subprocess.run(
        [prosec_bin(), *args], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def newsroom(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    """The demo's newsroom, run and triggered three times, under `prosec serve`."""
    root = tmp_path_factory.mktemp("browser") / "newsroom"
    shutil.copytree(
        CORPUS / "newsroom", root, ignore=shutil.ignore_patterns("dist", "runs", "state")
    )
    _prosec(root, "build", "--offline-tools")
    _prosec(root, "activate")
    _prosec(root, "run", "--input", "audience=editors")
    for data in TRIGGERS:
        _prosec(root, "trigger", "wire-feed", "--data", data)
    server = ServeProcess(root, "--no-cadences").wait_ready()
    try:
        yield server
    finally:
        assert server.terminate() == 0, server.output


def _open(page: Any, base: str) -> None:
    page.goto(base + "/")
    page.wait_for_selector("body[data-ready=true]")


def _scrub(page: Any, position: int) -> None:
    page.fill("#scrubber", str(position))
    page.wait_for_function(
        f"document.getElementById('position').textContent.startsWith('{position} /')"
    )


def _lit(page: Any) -> set[tuple[str, str, str]]:
    found = page.eval_on_selector_all(
        ".edge.lit",
        "els => els.map(e => [e.dataset.producer, e.dataset.facet, e.dataset.subscriber])",
    )
    return {tuple(item) for item in found}


def _steps(server: ServeProcess) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = httpx.get(server.base + "/api/scene", timeout=30).json()["steps"]
    return steps


def test_the_dag_renders_and_scrubbing_lights_exactly_the_lanes_that_moved(
    page: Any, newsroom: ServeProcess, artifacts: Path
) -> None:
    _open(page, newsroom.base)
    assert page.locator("svg.dag .node").count() == 5
    assert page.locator("svg.dag .edge").count() == 5
    assert page.locator("#live").is_visible()
    page.screenshot(path=str(artifacts / "newsroom-dag.png"))

    steps = _steps(newsroom)
    gateway = [s["index"] for s in steps if s["node"] == "wire-feed"]
    assert len(gateway) == 4  # the cold run and three triggers
    expected = [{BREAKING, FEATURES}, {BREAKING, FEATURES}, {BREAKING}, set()]
    for index, lanes in zip(gateway, expected, strict=True):
        _scrub(page, index + 1)
        assert _lit(page) == lanes, f"step {index}"
        current = page.locator("svg.dag .node.current")
        assert current.get_attribute("data-node") == "wire-feed"
    # the second trigger moved only `breaking`: features-desk never woke in that run
    between = [s["node"] for s in steps[gateway[2] + 1 : gateway[3]]]
    assert between == ["breaking-desk", "front-page", "editor-briefing"]
    _scrub(page, gateway[2] + 2)
    assert _lit(page) == {("breaking-desk", "@atomic", "front-page")}
    _scrub(page, gateway[2] + 1)
    page.screenshot(path=str(artifacts / "newsroom-scrub-breaking.png"))
    # before the first receipt every node is dim, nothing lit
    _scrub(page, 0)
    assert _lit(page) == set()
    assert page.locator("svg.dag .node.st-never").count() == 5
    # the meter counts tokens by surprise cause
    assert page.locator("#meter [data-cause=external]").count() == 1


def test_the_inspector_shows_a_version_diff(
    page: Any, newsroom: ServeProcess, artifacts: Path
) -> None:
    _open(page, newsroom.base)
    page.click("svg.dag .node[data-node='breaking-desk']")
    page.wait_for_selector("#diff-show")
    assert "reads breaking of wire-feed" in page.inner_text("#inspector")
    assert "Breaking Desk" in page.inner_text("#inspector pre.source")
    page.click("#diff-show")
    page.wait_for_selector("#diff pre .add")
    added = page.eval_on_selector_all("#diff pre .add", "els => els.map(e => e.textContent)")
    removed = page.eval_on_selector_all("#diff pre .del", "els => els.map(e => e.textContent)")
    assert any("Storm warning" in line for line in added)
    assert not any("Storm warning" in line for line in removed)
    page.screenshot(path=str(artifacts / "newsroom-inspector-diff.png"))


def test_the_page_asks_for_the_token_when_the_server_needs_one(
    page: Any, newsroom: ServeProcess
) -> None:
    token = "browser-token-5e1f"
    root = Path(newsroom.process.args[2])
    server = ServeProcess(root, env={"PROSEC_SERVE_TOKEN": token}, command="devtools")
    server.wait_ready()
    try:
        page.goto(server.base + "/")
        page.wait_for_selector("#login:not([hidden])")
        assert page.locator("svg.dag").count() == 0
        page.fill("#token", token)
        page.click("#login button")
        page.wait_for_selector("body[data-ready=true]")
        assert page.locator("svg.dag .node").count() == 5
        assert page.locator("#login").is_hidden()
    finally:
        assert server.terminate() == 0, server.output
    assert token not in server.output


def test_a_live_trigger_animates(page: Any, newsroom: ServeProcess, artifacts: Path) -> None:
    _open(page, newsroom.base)
    total = len(_steps(newsroom))
    page.wait_for_function("document.getElementById('status').textContent === 'attached'")
    data = {
        "breaking": ["Ferry strike", "Storm warning", "Bridge reopens"],
        "features": ["A day with the ferry crew"],
        "received_at": "10:00",
    }
    response = httpx.post(newsroom.base + "/trigger/wire-feed", json=data, timeout=30)
    assert response.status_code == 202, response.text
    # the new receipts stream in and play: the breaking lane lights, the node flashes
    page.wait_for_function(
        "document.querySelector('.edge.lit[data-facet=breaking]') !== null"
        " && document.querySelector('.node.flash-rendered') !== null"
    )
    page.screenshot(path=str(artifacts / "newsroom-live.png"))
    assert page.locator(".edge.lit[data-facet=features]").count() == 0
    final = total + 4  # wire-feed, breaking-desk, front-page, editor-briefing
    page.wait_for_function(
        f"document.getElementById('position').textContent === '{final} / {final}'"
    )
    assert "run" in page.inner_text("#status")


def _position(page: Any) -> int:
    return int(page.inner_text("#position").split(" /")[0])


def test_playback_plays_pauses_and_follows_the_speed(page: Any, newsroom: ServeProcess) -> None:
    _open(page, newsroom.base)
    total = len(_steps(newsroom))
    _scrub(page, 0)
    page.select_option("#speed", "0.5")  # 1.6 s a receipt: timers are never early
    started = time.monotonic()
    page.click("#play")
    assert page.inner_text("#play") == "❚❚"
    page.wait_for_function("document.getElementById('position').textContent.startsWith('2 /')")
    assert time.monotonic() - started >= 1.9  # 0.4 s to the first step, 1.6 s to the next
    page.click("#play")  # pause: the position holds
    assert page.inner_text("#play") == "▶"
    held = _position(page)
    page.wait_for_timeout(2000)
    assert _position(page) == held
    page.select_option("#speed", "4")  # 0.2 s a receipt
    started = time.monotonic()
    page.click("#play")
    page.wait_for_function(
        f"document.getElementById('position').textContent === '{total} / {total}'"
        " && document.getElementById('play').textContent === '▶'",  # it stops at the end
        timeout=60_000,
    )
    # at 1x the rest would take at least 0.8 s a receipt
    assert time.monotonic() - started < 0.8 * (total - held)


def test_rendered_skipped_and_failed_receipts_flash_dim_and_red(
    page: Any, tmp_path: Path, artifacts: Path
) -> None:
    doc = intent(
        {"g": {"wake_source": "external"}, "b": {}, "c": {}},
        [("b", "g", "@atomic"), ("c", "b", "@atomic")],
        ["g"],
    )
    root = Root.create(tmp_path / "p", doc)
    root.run()
    root.world("b", {"_control": {"fail": 3}})
    assert root.prosec("trigger", "g", "--data", '{"x": 1}').returncode == 1  # b fails
    root.world("b", {})
    assert root.prosec("trigger", "g", "--data", '{"x": 1}').returncode == 0  # g memo-skips
    server = ServeProcess(root.root, command="devtools").wait_ready()
    try:
        _open(page, server.base)
        statuses = [(s["node"], s["status"]) for s in _steps(server)]
        assert statuses[3:] == [("g", "rendered"), ("b", "failed"), ("g", "skipped")]

        def node(name: str) -> set[str]:
            classes = page.get_attribute(f"svg.dag .node[data-node='{name}']", "class")
            return set(str(classes).split())

        _scrub(page, 4)
        assert {"st-rendered", "current", "flash-rendered"} <= node("g")
        _scrub(page, 5)
        assert {"st-failed", "current", "flash-failed"} <= node("b")
        # the failed red (#f85149), once the stroke's 0.3 s transition is over
        page.wait_for_function(
            "getComputedStyle(document.querySelector(\"svg.dag .node[data-node='b'] rect\"))"
            ".stroke === 'rgb(248, 81, 73)'",
            timeout=5_000,
        )
        assert "failed" in page.inner_text("#caption")
        _scrub(page, 6)
        assert {"st-skipped", "current", "flash-skipped"} <= node("g")
        assert "st-failed" in node("b") and "current" not in node("b")
        animation = page.eval_on_selector(
            "svg.dag .node[data-node='g']", "n => getComputedStyle(n).animationName"
        )
        assert animation == "dim"
        page.screenshot(path=str(artifacts / "statuses-skipped-failed.png"))
    finally:
        assert server.terminate() == 0, server.output


@pytest.mark.conformance
def test_an_upstream_fixture_opens_in_the_devtools(
    page: Any, upstream: Path, artifacts: Path
) -> None:
    folder = upstream / "packages/reactor-devtools/fixtures/inbox-triage"
    server = ServeProcess(folder, command="devtools").wait_ready()
    try:
        _open(page, server.base)
        assert page.locator("svg.dag .node").count() == 17
        assert page.get_attribute("#scrubber", "max") == "95"
        assert not page.locator("#live").is_visible()
        _scrub(page, 43)  # the upstream beat "hero-dark-lane": one classifier lane lights
        lit = _lit(page)
        assert all(producer.startswith("responsibility.") for producer, _, _ in lit)
        page.click("svg.dag .node[data-node='responsibility.digest']")
        page.wait_for_selector("#diff-show")
        page.click("#diff-show")
        page.wait_for_selector("#diff div")
        page.screenshot(path=str(artifacts / "fixture-inbox-triage.png"))
    finally:
        assert server.terminate() == 0, server.output
