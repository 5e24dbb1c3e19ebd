"""`prosec serve` over real HTTP: uvicorn on 127.0.0.1, a real project, real renders.

Triggers, coalescing, credentials, body limits, cadences on an injected clock and
reloads run against uvicorn in a thread; every wait is bounded.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
from prosec.runtime.http import Auth, sign

from ..project import Project as Root
from ..project import intent
from .harness import FakeClock, running, settings_for, wait_until

EDGES = [("b", "g", "@atomic"), ("c", "b", "@atomic")]


def doc(extra_gateway: bool = False) -> dict[str, Any]:
    nodes: dict[str, dict[str, Any]] = {
        "g": {"wake_source": "external"},
        "b": {},
        "c": {"wake_source": "self", "cadence": "PT1H"},
    }
    entries = ["g"]
    if extra_gateway:
        nodes["h"] = {"wake_source": "external"}
        entries.append("h")
    return intent(nodes, EDGES, entries)


def make(tmp_path: Path) -> Root:
    return Root.create(tmp_path / "p", doc())


def run_state(client: httpx.Client, run_id: str) -> str:
    response = client.get(f"/runs/{run_id}")
    assert response.status_code == 200, response.text
    return str(response.json()["state"])


def finished(client: httpx.Client, run_id: str) -> bool:
    return run_state(client, run_id) in ("complete", "failed")


def test_trigger_is_acknowledged_with_its_run_and_propagates(tmp_path: Path) -> None:
    root = make(tmp_path)
    with running(settings_for(root.root, cadences=False)) as client:
        response = client.post("/trigger/g", json={"story": "bridge reopens"})
        assert response.status_code == 202, response.text
        ack = response.json()
        assert ack["gateway"] == "g" and ack["token"].startswith("sha256:")
        assert ack["run_id"] and ack["state"] in ("running", "done")
        assert response.headers["location"] == f"/wakes/{ack['wake_id']}"
        wait_until(lambda: finished(client, ack["run_id"]), what="the run to finish")
        assert client.get(f"/wakes/{ack['wake_id']}").json()["run_id"] == ack["run_id"]
        assert root.published("g")["data"] == {"story": "bridge reopens"}
        assert root.published("b")["inputs"]["g"]["data"] == {"story": "bridge reopens"}
        # the same data again: fingerprinted by content, nothing downstream moves
        again = client.post("/trigger/g", json={"story": "bridge reopens"}).json()
        wait_until(lambda: finished(client, again["run_id"]))
        assert root.renders()["b"] == 1


def release(fifo: Path) -> bool:
    """Write a line to a FIFO a render is blocked reading (False while no reader)."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        os.write(fd, b"go\n")
    finally:
        os.close(fd)
    return True


def test_wakes_arriving_during_a_run_coalesce(tmp_path: Path) -> None:
    root = make(tmp_path)
    os.mkfifo(root.root / "gate")
    root.world("b", {"_control": {"fifo": "gate"}})  # b's render waits for the gate
    with running(settings_for(root.root, cadences=False)) as client:
        first = client.post("/trigger/g", json={"n": 0}).json()
        wait_until(lambda: "b" in root.renders(), what="b's render to start")
        acks = [client.post("/trigger/g", json={"n": n}).json() for n in range(1, 6)]
        assert all(ack["state"] == "queued" and ack["run_id"] is None for ack in acks)
        root.world("b", {})
        wait_until(lambda: release(root.root / "gate"), what="b's render to read the gate")

        def claimed() -> list[str] | None:
            states = [client.get(f"/wakes/{a['wake_id']}").json() for a in acks]
            done = all(s["state"] == "done" for s in states)
            return [s["run_id"] for s in states] if done else None

        runs = wait_until(claimed, timeout=30, what="every wake to be served")
        # five wakes, at most two runs: the in-flight one's next wave and one more
        assert 1 <= len(set(runs)) <= 2
        assert first["run_id"] not in runs or len(set(runs)) == 1
        assert root.published("g")["data"] == {"n": 5}  # the last data wins
        assert root.renders()["g"] <= 3
        listing = client.get("/runs", params={"limit": 10}).json()["runs"]
        assert len(listing) <= 3


def test_credentials_are_required_when_configured(tmp_path: Path) -> None:
    root = make(tmp_path)
    auth = Auth(token="t0k3n-secret-value", webhook_secret="hook-secret-value")
    with running(settings_for(root.root, auth=auth, cadences=False)) as client:
        body = json.dumps({"x": 1}).encode()
        refused = [
            client.post("/trigger/g", content=body),
            client.post("/trigger/g", content=body, headers={"Authorization": "Bearer wrong"}),
            client.post("/trigger/g", content=body, headers={"Authorization": "Basic t0k3n"}),
            client.post(
                "/trigger/g", content=body, headers={"X-Prosec-Signature": sign("nope", body)}
            ),
            client.post(
                "/trigger/g",
                content=b'{"x": 2}',  # signed for another body
                headers={"X-Prosec-Signature": sign("hook-secret-value", body)},
            ),
        ]
        assert [r.status_code for r in refused] == [401] * 5
        assert all(r.json() == {"error": "missing or wrong credentials"} for r in refused)
        assert refused[0].headers["www-authenticate"] == "Bearer"
        for path in ("/status", "/cost", "/runs", "/api/scene"):
            assert client.get(path).status_code == 401
        assert client.get("/health").status_code == 200
        assert not (root.root / "runs").exists() or not list((root.root / "runs").iterdir())
        assert not list((root.root / "state" / "inbox").glob("*.json"))

        bearer = client.post(
            "/trigger/g", content=body, headers={"Authorization": "Bearer t0k3n-secret-value"}
        )
        assert bearer.status_code == 202
        signed = client.post(
            "/trigger/g",
            content=body,
            headers={"X-Hub-Signature-256": sign("hook-secret-value", body)},
        )
        assert signed.status_code == 202
        status = client.get("/status", headers={"Authorization": "Bearer t0k3n-secret-value"})
        assert status.status_code == 200
        assert "t0k3n" not in status.text and "hook-secret" not in status.text


def test_credentials_are_checked_before_the_body_is_read(tmp_path: Path) -> None:
    root = make(tmp_path)
    auth = Auth(token="t0k3n-secret-value")
    settings = settings_for(root.root, auth=auth, max_body=64, cadences=False)
    with running(settings) as client:
        big = b'{"x": "' + b"a" * 100 + b'"}'
        stranger = client.post("/trigger/g", content=big)
        assert stranger.status_code == 401  # not 413: the limit is not told to strangers
        assert "64" not in stranger.text
        # a signature header counts for nothing while no webhook secret is set
        forged = client.post("/trigger/g", content=big, headers={"X-Prosec-Signature": "x"})
        assert forged.status_code == 401
        bearer = {"Authorization": "Bearer t0k3n-secret-value"}
        assert client.post("/trigger/g", content=big, headers=bearer).status_code == 413


def test_body_limits_and_malformed_json(tmp_path: Path) -> None:
    root = make(tmp_path)
    with running(settings_for(root.root, max_body=64, cadences=False)) as client:
        big = client.post("/trigger/g", content=b'{"x": "' + b"a" * 100 + b'"}')
        assert big.status_code == 413
        assert "64 bytes" in big.json()["error"]

        def chunks() -> Any:  # no Content-Length: refused as it streams
            yield b'{"x": "'
            yield b"a" * 100
            yield b'"}'

        assert client.post("/trigger/g", content=chunks()).status_code == 413
        bad = client.post("/trigger/g", content=b'{"x": ')
        assert bad.status_code == 400
        assert bad.json()["error"].startswith("malformed JSON: ")
        assert "line 1 column" in bad.json()["error"]
        nan = client.post("/trigger/g", content=b'{"x": NaN}')
        assert nan.status_code == 400 and "NaN" in nan.json()["error"]
        assert client.post("/trigger/nope", json={}).status_code == 404
        not_gateway = client.post("/trigger/b", json={})
        assert not_gateway.status_code == 422 and "not a gateway" in not_gateway.json()["error"]
        assert root.renders() == {}


def test_cadences_fire_on_the_injected_clock_once_after_downtime(tmp_path: Path) -> None:
    root = make(tmp_path)
    clock = FakeClock(dt.datetime(2031, 3, 1, 9, 0, tzinfo=dt.UTC))
    settings = settings_for(root.root, clock=clock)
    with running(settings) as client:
        # never rendered: due at once (its producer b is rendered in the same run)
        wait_until(lambda: root.renders()["c"] == 1, what="the first cadence wake")
        idle = lambda: client.get("/status").json()["server"]["in_flight"] is None  # noqa: E731
        wait_until(idle, what="its run to end")  # the cadence restarts at the render
        clock.advance(minutes=30)
        wait_until(idle)
        assert root.renders()["c"] == 1
        clock.advance(minutes=31)
        wait_until(lambda: root.renders()["c"] == 2, what="the hourly wake")
    # ten hours of downtime: one catch-up wake, not ten
    clock.advance(hours=10)
    with running(settings) as client:
        wait_until(lambda: root.renders()["c"] == 3, what="the catch-up wake")
        ticks = client.get("/status").json()["server"]["cadence_ticks"]
        assert ticks == {"c": clock().isoformat()}
        for _ in range(10):  # the server keeps polling; nothing else comes due
            wait_until(lambda: client.get("/status").json()["server"]["in_flight"] is None)
        assert root.renders()["c"] == 3


def test_reload_when_a_new_manifest_is_activated(tmp_path: Path) -> None:
    root = make(tmp_path)
    with running(settings_for(root.root, cadences=False)) as client:
        assert client.post("/trigger/h", json={}).status_code == 404
        before = client.get("/status").json()["server"]["generation"]
        root.set_intent(doc(extra_gateway=True))  # what `prosec activate` does, atomically
        wait_until(
            lambda: client.get("/status").json()["server"]["generation"] > before,
            what="the reload",
        )
        ack = client.post("/trigger/h", json={"hello": 1})
        assert ack.status_code == 202
        wait_until(lambda: finished(client, ack.json()["run_id"]))
        assert root.published("h")["data"] == {"hello": 1}
        # a broken manifest keeps the old one serving and says why
        (root.root / "dist/manifest.active.json").write_text("{")
        wait_until(lambda: client.get("/status").json()["server"]["reload_error"])
        assert client.post("/trigger/h", json={"hello": 2}).status_code == 202


def test_read_endpoints(tmp_path: Path) -> None:
    root = make(tmp_path)
    with running(settings_for(root.root, cadences=False)) as client:
        ack = client.post("/trigger/g", json={"a": 1}).json()
        wait_until(lambda: finished(client, ack["run_id"]))
        assert client.get("/health").json() == {"ok": True, "mode": "serve"}
        status = client.get("/status").json()
        assert {n["node"]: n["status"] for n in status["nodes"]}["b"] == "rendered"
        assert status["server"]["last_run"]["run_id"] == ack["run_id"]
        cost = client.get("/cost").json()
        assert cost["total"]["receipts"] == 3 and next(r["node"] for r in cost["by_node"]) == "g"
        run = client.get(f"/runs/{ack['run_id']}").json()
        assert run["state"] == "complete" and run["counts"] == {"rendered": 3}
        assert client.get("/runs/20990101-000000-zzzzzz").status_code == 404
        assert client.get("/runs/../../etc").status_code == 404
        assert client.get("/runs", params={"limit": "x"}).status_code == 400
        assert client.get("/wakes/unknown").status_code == 404
        spec = client.get("/openapi.json").json()
        assert "/trigger/{gateway}" in spec["paths"]
        docs = client.get("/docs")
        assert docs.status_code == 200 and "POST /trigger/{gateway}" in docs.text
        page = client.get("/")
        assert page.status_code == 200 and "/static/app.js" in page.text
        assert page.headers["x-frame-options"] == "DENY"
        assert client.get("/static/app.js").status_code == 200


def test_live_events_stream_new_receipts(tmp_path: Path) -> None:
    root = make(tmp_path)
    with running(settings_for(root.root, cadences=False)) as client:
        scene = client.get("/api/scene").json()
        assert scene["live"] and scene["steps"] == []
        assert {n["node"] for n in scene["nodes"]} == {"g", "b", "c"}
        assert scene["svg"].startswith("<svg")
        seen: list[dict[str, Any]] = []
        with client.stream("GET", "/api/events", params={"since": 0}, timeout=20) as stream:
            lines = stream.iter_lines()
            assert next(lines) == "event: hello"
            client.post("/trigger/g", json={"live": True})
            event = None
            for line in lines:  # bounded by the stream's read timeout
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event == "steps":
                    seen.extend(json.loads(line[6:])["steps"])
                    if len(seen) >= 3:
                        break
        assert [s["node"] for s in seen[:3]] == ["g", "b", "c"]
        assert seen[0]["edges"] and seen[0]["status"] == "rendered"


def test_devtools_only_server_is_read_only(tmp_path: Path) -> None:
    root = make(tmp_path)
    root.run()
    settings = replace(settings_for(root.root), devtools_only=True)
    with running(settings) as client:
        assert client.get("/health").json()["mode"] == "devtools"
        assert client.post("/trigger/g", json={}).status_code == 405
        scene = client.get("/api/scene").json()
        assert not scene["live"] and len(scene["steps"]) == 3
        node = client.get("/api/nodes/b").json()
        assert node["inputs"] == [{"producer": "g", "facet": "@atomic", "subscriber": "b"}]
        assert len(node["receipts"]) == 1 and node["versions"] == [node["published"]]
        files = client.get(f"/api/nodes/b/versions/{node['published']}").json()["files"]
        assert "truth.json" in files
        assert client.get("/api/nodes/nope").status_code == 404


def test_a_wake_another_runner_takes_is_found_in_its_run(tmp_path: Path) -> None:
    from prosec.runtime import serve
    from prosec.runtime.executor import EngineOptions
    from prosec.runtime.session import open_project

    root = make(tmp_path)
    other = open_project(root.root)  # a second runner, as `prosec run` from a shell
    other.bind_renders({})
    taken: list[str] = []
    with running(settings_for(root.root, cadences=False, ack_wait=0.3)) as client:
        wait_until(other.backend.try_lock, what="the runner lock")
        ack = client.post("/trigger/g", json={"from": "http"}).json()
        assert ack["state"] == "queued" and ack["run_id"] is None
        served = serve.serve(
            other,
            kind="run",
            wakes=[],
            inputs={},
            options=EngineOptions(),
            on_run=lambda run, summary: taken.append(run.run_id),
        )
        assert served and taken
        wake = client.get(f"/wakes/{ack['wake_id']}").json()
        assert wake["run_id"] == taken[0] and wake["state"] == "done"
    assert root.published("g")["data"] == {"from": "http"}


def test_serving_the_in_context_backend(tmp_path: Path) -> None:
    root = make(tmp_path)
    with running(settings_for(root.root, backend="in-context", cadences=False)) as client:
        ack = client.post("/trigger/g", json={"memory": 1}).json()
        assert ack["run_id"]
        wait_until(lambda: client.get("/status").json()["server"]["last_run"])
        nodes = {n["node"]: n["status"] for n in client.get("/status").json()["nodes"]}
        assert nodes["g"] == "rendered" and nodes["b"] == "rendered"
        assert client.get("/cost").json()["total"]["receipts"] == 3
    assert not (root.root / "state").exists()


def overlap(timeline: Path, nodes: set[str]) -> int:
    """The most renders of `nodes` running at once, from the test render's timeline.log."""
    marks = []
    for line in timeline.read_text().splitlines():
        node, what, at = line.split()
        if node in nodes:
            marks.append((float(at), 0 if what == "end" else 1))
    running_now = peak = 0
    for _, start in sorted(marks):
        running_now += 1 if start else -1
        peak = max(peak, running_now)
    return peak


def test_renders_run_in_parallel_bounded_by_jobs(tmp_path: Path) -> None:
    desks = {f"d{i}" for i in range(4)}
    nodes: dict[str, dict[str, Any]] = {"g": {"wake_source": "external"}}
    nodes.update({desk: {} for desk in desks})
    root = Root.create(tmp_path / "p", intent(nodes, [(d, "g", "@atomic") for d in desks], ["g"]))
    for desk in desks:
        root.world(desk, {"_control": {"sleep": 0.6}})
    with running(settings_for(root.root, cadences=False, jobs=2)) as client:
        ack = client.post("/trigger/g", json={"n": 1}).json()
        wait_until(lambda: finished(client, ack["run_id"]), what="the run to finish")
        assert run_state(client, ack["run_id"]) == "complete"
    assert all(root.renders()[desk] == 1 for desk in desks)
    assert overlap(root.root / "timeline.log", desks) == 2  # in parallel, never more than 2


def test_an_http_trigger_is_fingerprinted_as_prosec_trigger(tmp_path: Path) -> None:
    root = make(tmp_path)
    with running(settings_for(root.root, cadences=False)) as client:
        ack = client.post("/trigger/g", content=b'{"b": [1, 2], "a": "x"}').json()
        wait_until(lambda: finished(client, ack["run_id"]))
    # the same content from the command line, keys in another order: the same token,
    # so the gateway memo-skips and nothing downstream renders again
    cli = root.prosec("trigger", "g", "--data", '{"a": "x", "b": [1, 2]}', "--json")
    assert cli.returncode == 0, cli.stderr
    summary = json.loads(cli.stdout)
    assert summary["rendered"] == [] and summary["skipped"] == ["g"]
    info = json.loads((root.run_dir(summary["run_id"]) / "run.json").read_text())
    assert info["wakes"][0]["refs"] == [ack["token"]]
    assert root.renders() == {"g": 1, "b": 1, "c": 1}


def test_pages_and_assets_name_no_other_origin(tmp_path: Path) -> None:
    root = make(tmp_path)
    with running(settings_for(root.root, cadences=False)) as client:
        page = client.get("/").text
        assets = [client.get(f"/static/{name}") for name in ("app.js", "app.css")]
        assert all(a.status_code == 200 for a in assets)
        for text in (page, client.get("/docs").text, *(a.text for a in assets)):
            assert "://" not in text and 'src="//' not in text and 'href="//' not in text


def test_a_cron_cadence_fires_at_its_minute_and_catches_up_once(tmp_path: Path) -> None:
    nodes: dict[str, dict[str, Any]] = {
        "g": {"wake_source": "external"},
        "b": {},
        "c": {"wake_source": "self", "cadence": "cron:0 9 * * *"},
    }
    root = Root.create(tmp_path / "p", intent(nodes, EDGES, ["g"]))
    clock = FakeClock(dt.datetime(2031, 3, 1, 8, 0, tzinfo=dt.UTC))
    settings = settings_for(root.root, clock=clock)
    idle = lambda c: c.get("/status").json()["server"]["in_flight"] is None  # noqa: E731
    with running(settings) as client:
        wait_until(lambda: root.renders()["c"] == 1, what="the first wake (never rendered)")
        wait_until(lambda: idle(client))
        clock.advance(minutes=59)  # 08:59: 09:00 has not come round
        time.sleep(0.5)  # ten polls of the cadences
        wait_until(lambda: idle(client))
        assert root.renders()["c"] == 1
        clock.advance(minutes=1, seconds=30)  # 09:00:30
        wait_until(lambda: root.renders()["c"] == 2, what="the 09:00 wake")
        wait_until(lambda: idle(client))
    clock.advance(days=3)  # three 09:00s missed while stopped: one catch-up wake
    with running(settings) as client:
        wait_until(lambda: root.renders()["c"] == 3, what="the catch-up wake")
        time.sleep(0.5)
        wait_until(lambda: idle(client))
        assert root.renders()["c"] == 3
