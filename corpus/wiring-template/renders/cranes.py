"""The crane renders: a monitor per crane (a template mount) and the harbour board.

A mount reads only the facet it subscribes to: PROSEC_INPUTS names the producer's facet
(`north`, `south`, `east`), and the producer's truth holds one JSON file per crane.
"""

import json
import os
from pathlib import Path


def main() -> None:
    pinned = json.loads(Path(os.environ["PROSEC_INPUTS"]).read_text(encoding="utf-8"))
    node = os.environ["PROSEC_NODE"]
    if node.startswith("crane-monitor["):
        (item,) = pinned["inputs"]
        crane = item["facet"]
        path = Path(item["path"]) / f"{crane}.json"
        data = json.loads(path.read_text("utf-8")) if path.is_file() else {}
        truth = {
            "crane": crane,
            "lifts": data.get("lifts", 0),
            "status": "alarm" if data.get("alarm") else "ok",
        }
    elif node == "harbour-board":
        cranes = {}
        for item in pinned["inputs"]:
            folder = Path(item["path"])
            monitor = {f.stem: json.loads(f.read_text("utf-8")) for f in folder.glob("*.json")}
            cranes[monitor["crane"]] = monitor["status"]
        truth = {"cranes": cranes, "alarms": sorted(c for c, s in cranes.items() if s == "alarm")}
    else:
        raise SystemExit(f"cranes.py has no render for node {node!r}")
    output = Path(os.environ["PROSEC_OUTPUT"])
    for field, value in truth.items():
        (output / f"{field}.json").write_text(json.dumps(value, sort_keys=True), "utf-8")


if __name__ == "__main__":
    main()
