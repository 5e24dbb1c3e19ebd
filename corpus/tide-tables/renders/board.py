"""The harbour board's render: one fixed-width line per turn, each flagging the warnings."""

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


forecast = read_inputs()["tide-forecast"]
flags = "".join(f" ! {warning}" for warning in forecast.get("warnings", []))
board = [
    f"{'HW' if turn['kind'] == 'high' else 'LW'} {turn['time']} {float(turn['height_m']):.1f} m"
    + flags
    for turn in forecast.get("turns", [])
]
publish({"board": board})
