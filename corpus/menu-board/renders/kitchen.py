"""The menu board's render: deterministic given the pinned inputs (see newsroom's desk.py).

`tasted-dishes` is the kitchen library's tasting loop with this kitchen's cook and taster;
`menu-board` prices the kept dishes as the library's `price-menu` function says (cost of
the ingredients plus the margin, rounded up to the next half unit), reading that
contract from the run's source snapshot, where the build put the installed dependency.
"""

import json
import math
import os
from pathlib import Path

RECIPES = {
    "tomato soup": ["tomato", "onion"],
    "garden salad": ["tomato", "lettuce"],
    "omelette": ["egg", "onion"],
}
PRICE_MENU = "sources/deps/example.org/acme/kitchen-lib/src/price-menu.prose.md"
MARGIN = 0.3  # `margin: 0.3` in menu-board's ### Execution


def read_inputs() -> dict[str, dict]:
    pinned = json.loads(Path(os.environ["PROSEC_INPUTS"]).read_text(encoding="utf-8"))
    inputs: dict[str, dict] = {}
    for item in pinned["inputs"]:
        folder = Path(item["path"]) if item["path"] else None
        files = sorted(folder.rglob("*.json")) if folder and folder.is_dir() else []
        inputs[item["producer"]] = {f.stem: json.loads(f.read_text("utf-8")) for f in files}
    return inputs


def price(dish: dict) -> float:
    cost = sum(ingredient["cost"] for ingredient in dish["ingredients"])
    return math.ceil(cost * (1 + MARGIN) * 2) / 2


def render(node: str, inputs: dict[str, dict]) -> dict:
    if node == "dish-ideas":
        stock = {s["item"]: s for s in inputs["pantry-feed"].get("stock", []) if s["quantity"]}
        dishes = [
            {"dish": dish, "ingredients": [{"item": n, "cost": stock[n]["cost"]} for n in needed]}
            for dish, needed in sorted(RECIPES.items())
            if all(name in stock for name in needed)
        ]
        return {"dishes": dishes}
    if node == "tasted-dishes":  # the taster keeps every dish the cook can make
        return {"dishes": inputs["dish-ideas"].get("dishes", [])}
    if node == "menu-board":
        contract = Path(os.environ["PROSEC_RUN_DIR"]) / PRICE_MENU
        if "### Returns" not in contract.read_text(encoding="utf-8"):
            raise SystemExit(f"the price-menu contract is missing from {contract}")
        dishes = inputs["tasted-dishes"].get("dishes", [])
        return {"board": [{"dish": d["dish"], "price": price(d)} for d in dishes]}
    raise SystemExit(f"kitchen.py has no render for node {node!r}")


def main() -> None:
    truth = render(os.environ["PROSEC_NODE"], read_inputs())
    output = Path(os.environ["PROSEC_OUTPUT"])
    for field, value in truth.items():
        (output / f"{field}.json").write_text(json.dumps(value, sort_keys=True), "utf-8")


if __name__ == "__main__":
    main()
