"""`prosec receipts cost`: fresh vs reused tokens by node and by surprise cause, from the
real command over a real project."""

from __future__ import annotations

import json
from pathlib import Path

from .project import Project as Root
from .project import intent

RENDER = """
import json
def render(request):
    (request.output / "t.json").write_text(json.dumps({"n": 1}))
    return {"model": "m", "provider": "p", "tokens": {"fresh": 120, "reused": 30}}
"""


def test_receipts_cost_text_and_json(tmp_path: Path) -> None:
    doc = intent(
        {
            "g": {"wake_source": "external"},
            "b": {},
            "c": {"wake_source": "self", "cadence": "PT1H"},
        },
        [("b", "g", "@atomic"), ("c", "b", "@atomic")],
        ["g"],
    )
    root = Root.create(tmp_path / "p", doc)
    (root.root / "costly.py").write_text(RENDER)
    with (root.root / "prose.toml").open("a") as toml:
        toml.write('\n[render.b]\nkind = "python"\ncallable = "costly:render"\n')
    root.run()
    assert root.prosec("tick", "c").returncode == 0
    result = root.prosec("receipts", "cost", ".", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    by_node = {row["node"]: row for row in summary["by_node"]}
    assert [row["node"] for row in summary["by_node"]] == ["g", "b", "c"]
    assert by_node["b"]["fresh"] == 120 and by_node["b"]["reused"] == 30
    assert by_node["c"]["receipts"] == 2
    causes = {row["cause"]: row for row in summary["by_cause"]}
    assert causes["self"]["receipts"] >= 1 and causes["input"]["fresh"] == 120
    assert summary["total"]["reuse_ratio"] == 0.2
    text = root.prosec("receipts", "cost", ".")
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert lines[0].startswith("by node") and any(line.startswith("b ") for line in lines)
    assert lines[-1].split()[:4] == ["total", str(summary["total"]["receipts"]), "120", "30"]
    missing = root.prosec("receipts", "cost", str(tmp_path / "nowhere"))
    assert missing.returncode == 2
