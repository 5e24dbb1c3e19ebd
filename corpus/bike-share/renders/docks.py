"""The bike-share desks' render: the van's rebalancing route, or one ticket per faulty dock."""

import json
import os
from pathlib import Path


def read_inputs() -> dict[str, dict]:
    """Each producer's published JSON files by stem (README: the render contract)."""
    pinned = json.loads(Path(os.environ["PROSEC_INPUTS"]).read_text(encoding="utf-8"))
    inputs: dict[str, dict] = {}
    for item in pinned["inputs"]:
        folder = Path(item["path"]) if item["path"] else None
        files = sorted(folder.rglob("*.json")) if folder and folder.is_dir() else []
        inputs[item["producer"]] = {f.stem: json.loads(f.read_text("utf-8")) for f in files}
    return inputs


def publish(truth: dict) -> None:
    """One JSON file per maintained field in the staging folder PROSEC_OUTPUT."""
    output = Path(os.environ["PROSEC_OUTPUT"])
    for field, value in truth.items():
        (output / f"{field}.json").write_text(json.dumps(value, sort_keys=True), "utf-8")


VAN_CAPACITY = 20
telemetry = read_inputs()["dock-telemetry"]


def route() -> list[dict]:
    """Load the surplus over half capacity at full docks, then unload at empty ones."""
    docks = telemetry.get("occupancy", [])
    surplus = {d["dock"]: d["bikes"] - d["capacity"] // 2 for d in docks}
    stops, carried = [], 0
    for dock, extra in surplus.items():
        if extra > 0:
            load = min(extra, VAN_CAPACITY - carried)
            carried += load
            stops.append({"dock": dock, "action": "load", "bikes": load})
    for dock, extra in surplus.items():
        if extra < 0 and carried:
            unload = min(-extra, carried)
            carried -= unload
            stops.append({"dock": dock, "action": "unload", "bikes": unload})
    return stops


def tickets() -> list[dict]:
    """The first report of each faulty dock, by dock."""
    first: dict[str, dict] = {}
    for fault in sorted(telemetry.get("faults", []), key=lambda f: str(f.get("at", ""))):
        first.setdefault(str(fault["dock"]), fault)
    return [{"dock": dock, "fault": f["fault"], "first_seen": f.get("at")}
            for dock, f in sorted(first.items())]


if os.environ["PROSEC_NODE"] == "rebalancing-runs":
    stops = route()
    load = 0
    peak = 0
    for stop in stops:
        load += stop["bikes"] if stop["action"] == "load" else -stop["bikes"]
        peak = max(peak, load)
    publish({"route": stops})
    ids = [i for i in os.environ.get("PROSEC_ATTESTED_IDS", "").split(",") if i]
    if ids and peak <= VAN_CAPACITY:
        Path(os.environ["PROSEC_ATTEST"]).write_text(json.dumps({"attested": ids}), "utf-8")
else:
    publish({"tickets": tickets()})
