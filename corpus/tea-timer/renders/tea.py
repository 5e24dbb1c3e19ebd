"""The tea-timer's render: reads the call from $PROSEC_INPUTS, writes its two returns."""

import json
import os
from pathlib import Path

STEEP = {"green": 2, "black": 4, "oolong": 3, "herbal": 5}
WATER = {
    "green": "Use water just off the boil, around 80 °C.",
    "black": "Use water at a rolling boil.",
    "oolong": "Use water around 90 °C.",
    "herbal": "Use water at a rolling boil and cover the pot.",
}
EXTRA = {"mild": -1, "medium": 0, "strong": 1}

call = json.loads(Path(os.environ["PROSEC_INPUTS"]).read_text())["call"]
tea = str(call["args"].get("tea", "black")).strip().lower()
strength = str(call["args"].get("strength", "medium")).strip().lower()
out = Path(os.environ["PROSEC_OUTPUT"])
(out / "minutes.json").write_text(json.dumps(max(1, STEEP.get(tea, 3) + EXTRA.get(strength, 0))))
(out / "advice.md").write_text(WATER.get(tea, "Use freshly boiled water.") + "\n")
