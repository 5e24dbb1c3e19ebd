"""The lighthouse keeper's render: the lights that are not turning, and one more watch."""

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


reports = read_inputs()["lamp-reports"].get("reports", [])
dark = [str(r["light"]) for r in reports if not r.get("turning")]
publish({"dark_lights": dark, "watches": 1})
