"""The daily takings' render: the day's total and the item sold most often."""

from collections import Counter

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


sales = read_inputs()["till-roll"].get("sales", [])
counts = Counter(str(sale["item"]) for sale in sales)
best = min(counts, key=lambda item: (-counts[item], item)) if counts else None
publish({"best_seller": best, "total": sum(sale["price"] for sale in sales)})
