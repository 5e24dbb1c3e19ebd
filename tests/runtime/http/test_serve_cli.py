"""The real `prosec serve` process: SIGTERM mid-render, secrets kept out of the log,
refused binds, and a cadence clock injected through the environment."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from prosec.runtime.http import sign

from ..project import Project as Root
from ..project import intent
from .harness import ServeProcess, wait_until
from .test_server import EDGES, doc


def test_sigterm_mid_render_loses_nothing_and_the_wake_completes_after_restart(
    tmp_path: Path,
) -> None:
    root = Root.create(tmp_path / "p", doc())
    root.world("b", {"_control": {"sleep": 30}})
    server = ServeProcess(root.root, "--grace", "0.5", "--no-cadences").wait_ready()
    with server.client() as client:
        ack = client.post("/trigger/g", json={"edition": "late"}).json()
        assert ack["run_id"]
        wait_until(lambda: "b" in root.renders(), what="b's render to start")
    assert server.terminate() == 0  # a graceful stop
    assert "renders still running after the grace period" in server.output
    run = root.run_dir(ack["run_id"])
    assert not any(line.startswith(("---end", "---error")) for line in root.log(ack["run_id"]))
    assert root.published("g")["data"] == {"edition": "late"}  # its commit was finished
    assert root.ledger("b") == [] and root.published("b") is None  # killed before any commit
    assert not list((root.root / "state/world-model").glob("*/pending.json"))
    assert run.is_dir()

    root.world("b", {"story": "ok"})
    again = ServeProcess(root.root, "--no-cadences").wait_ready()
    with again.client() as client:
        wait_until(
            lambda: client.get(f"/runs/{ack['run_id']}").json()["state"] == "complete",
            what="the cut run to be resumed",
        )
        assert client.get(f"/wakes/{ack['wake_id']}").json()["run_id"] == ack["run_id"]
    assert again.terminate() == 0
    assert root.published("b")["inputs"]["g"]["data"] == {"edition": "late"}
    assert root.published("c")["inputs"]["b"]["own"] == {"story": "ok"}
    verify = root.prosec("receipts", "verify", ".")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_tokens_are_never_logged(tmp_path: Path) -> None:
    root = Root.create(tmp_path / "p", doc())
    token, secret = "tok-9f1c2a7e5d", "hook-4b8e0c3a6f"
    wrong = "wrong-7a6b5c4d"
    server = ServeProcess(
        root.root,
        "--host",
        "127.0.0.1",
        "--no-cadences",
        env={"PROSEC_SERVE_TOKEN": token, "PROSEC_WEBHOOK_SECRET": secret},
    ).wait_ready()
    body = json.dumps({"a": 1}).encode()
    with server.client() as client:
        assert client.post("/trigger/g", content=body).status_code == 401
        bad = {"Authorization": f"Bearer {wrong}"}
        assert client.post("/trigger/g", content=body, headers=bad).status_code == 401
        assert client.get("/status", headers=bad).status_code == 401
        good = {"Authorization": f"Bearer {token}"}
        assert client.post("/trigger/g", content=body, headers=good).status_code == 202
        signed = {"X-Prosec-Signature": sign(secret, body)}
        assert client.post("/trigger/g", content=body, headers=signed).status_code == 202
        assert client.get("/status", headers=good).status_code == 200
    assert server.terminate() == 0
    log = server.output
    assert '"POST /trigger/g HTTP/1.1" 202' in log  # requests are logged ...
    for value in (token, secret, wrong, sign(secret, body)[7:]):
        assert value not in log  # ... credentials never


def test_binding_beyond_loopback_needs_a_secret(tmp_path: Path) -> None:
    root = Root.create(tmp_path / "p", doc())
    result = root.prosec("serve", ".", "--host", "0.0.0.0", "--port", "0")
    assert result.returncode == 2
    assert "PROSEC_SERVE_TOKEN" in result.stderr and "--host 0.0.0.0" in result.stderr
    missing = root.prosec("serve", str(tmp_path / "nowhere"))
    assert missing.returncode == 2
    broken = Root.create(tmp_path / "q", doc())
    (broken.root / "dist/manifest.active.json").write_text("[")
    result = broken.prosec("serve", ".", "--port", "0")
    assert result.returncode == 2 and "manifest.active.json" in result.stderr


def test_cadence_clock_from_the_environment(tmp_path: Path) -> None:
    nodes = {
        "g": {"wake_source": "external"},
        "b": {},
        "c": {"wake_source": "self", "cadence": "PT1H"},
    }
    root = Root.create(tmp_path / "p", intent(nodes, EDGES, ["g"]))
    clock = root.root / "clock.txt"
    start = dt.datetime(2031, 3, 1, 9, 0, tzinfo=dt.UTC)
    clock.write_text(start.isoformat())
    server = ServeProcess(
        root.root, "--poll", "0.05", env={"PROSEC_CLOCK_FILE": str(clock)}
    ).wait_ready()
    wait_until(lambda: root.renders()["c"] == 1, what="the first cadence wake")
    with server.client() as client:  # the cadence restarts when the render commits
        wait_until(lambda: client.get("/status").json()["server"]["last_run"], what="its run")
    clock.write_text((start + dt.timedelta(hours=5)).isoformat())
    wait_until(lambda: root.renders()["c"] == 2, what="the catch-up wake")
    assert server.terminate() == 0
    assert root.renders()["c"] == 2


def test_a_wake_queued_at_sigterm_is_served_after_restart(tmp_path: Path) -> None:
    root = Root.create(tmp_path / "p", doc())
    root.world("b", {"_control": {"sleep": 30}})
    server = ServeProcess(root.root, "--grace", "0.5", "--no-cadences").wait_ready()
    with server.client() as client:
        first = client.post("/trigger/g", json={"edition": "first"}).json()
        wait_until(lambda: "b" in root.renders(), what="b's render to start")
        queued = client.post("/trigger/g", json={"edition": "second"}).json()
        assert queued["state"] == "queued" and queued["run_id"] is None
    assert server.terminate() == 0
    # acknowledged, not yet served: it waits on disk (the inbox, or the cut run's wakes)
    assert root.published("g")["data"] == {"edition": "first"}
    inbox = [json.loads(p.read_text()) for p in (root.root / "state/inbox").glob("*.json")]
    claimed = json.loads((root.run_dir(first["run_id"]) / "run.json").read_text())["wakes"]
    assert queued["wake_id"] in {w.get("id") for w in inbox + claimed}

    root.world("b", {"story": "ok"})
    again = ServeProcess(root.root, "--no-cadences").wait_ready()
    with again.client() as client:
        wait_until(
            lambda: client.get(f"/wakes/{queued['wake_id']}").json()["state"] == "done",
            what="the queued wake to be served",
        )
        wait_until(lambda: client.get("/status").json()["server"]["in_flight"] is None)
    assert again.terminate() == 0
    assert root.published("g")["data"] == {"edition": "second"}
    assert root.published("b")["inputs"]["g"]["data"] == {"edition": "second"}
    assert not list((root.root / "state/inbox").glob("*.json"))
