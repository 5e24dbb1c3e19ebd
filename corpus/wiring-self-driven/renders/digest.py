"""The daily digest's render: one line per watched price, in product order."""

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


prices = read_inputs()["price-watch"].get("prices", {})
publish({"digest": [f"{name}: {prices[name]}" for name in sorted(prices)]})
