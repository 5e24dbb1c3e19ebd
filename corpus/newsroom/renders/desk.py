"""The newsroom demo's render: a few lines per desk, deterministic given the pinned inputs.

prosec runs it with the node's context in PROSEC_* variables (see the README's render
contract); it reads the inputs at their pinned versions and writes the node's artifact
to the staging folder PROSEC_OUTPUT, one JSON file per maintained field.
"""

import json
import os
from pathlib import Path


def read_inputs() -> tuple[dict[str, dict], dict[str, str]]:
    """Each producer's published JSON files by stem, and the caller's bindings."""
    pinned = json.loads(Path(os.environ["PROSEC_INPUTS"]).read_text(encoding="utf-8"))
    inputs: dict[str, dict] = {}
    for item in pinned["inputs"]:
        folder = Path(item["path"]) if item["path"] else None
        files = sorted(folder.rglob("*.json")) if folder and folder.is_dir() else []
        inputs[item["producer"]] = {f.stem: json.loads(f.read_text("utf-8")) for f in files}
    caller = {
        item["name"]: caller_value(Path(item["path"]))
        for item in pinned["caller"]
        if Path(item["path"]).is_file()
    }
    return inputs, caller


def caller_value(path: Path) -> str:
    """A caller binding file is a header (`# name`, `binding: input`, `source: caller`),
    a `---` line, then the value the caller gave (README: the render contract)."""
    text = path.read_text(encoding="utf-8")
    _, separator, value = text.partition("\n---\n")
    return (value if separator else text).strip()


def render(node: str, inputs: dict[str, dict], caller: dict[str, str]) -> dict:
    if node == "breaking-desk":
        items = inputs["wire-feed"].get("breaking", [])
        return {"decisions": [{"story": s, "action": "lead" if i == 0 else "hold"}
                              for i, s in enumerate(items)]}
    if node == "features-desk":
        items = inputs["wire-feed"].get("features", [])
        return {"summaries": [{"story": s, "summary": f"{s}, in one line"} for s in items]}
    if node == "front-page":
        led = [d["story"] for d in inputs["breaking-desk"].get("decisions", [])
               if d["action"] == "lead"]
        features = [s["story"] for s in inputs["features-desk"].get("summaries", [])]
        return {"stories": led + features}
    if node == "editor-briefing":
        stories = inputs["front-page"].get("stories", [])
        audience = caller.get("audience", "the newsroom")
        return {"briefing": {"audience": audience, "lead": stories[0] if stories else None}}
    raise SystemExit(f"desk.py has no render for node {node!r}")


def main() -> None:
    inputs, caller = read_inputs()
    truth = render(os.environ["PROSEC_NODE"], inputs, caller)
    output = Path(os.environ["PROSEC_OUTPUT"])
    for field, value in truth.items():
        (output / f"{field}.json").write_text(json.dumps(value, sort_keys=True), "utf-8")


if __name__ == "__main__":
    main()
