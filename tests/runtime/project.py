"""Builders for end-to-end tests: a project dir, a hand-written compiled intent, the CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prosec.runtime.canonical import token

REPO = Path(__file__).resolve().parents[2]
RENDER_SCRIPT = Path(__file__).with_name("renders") / "node.py"
PROSEC = Path(sys.executable).parent / "prosec"


def intent(
    nodes: dict[str, dict[str, Any]],
    edges: list[tuple[str, str, str]],
    entry_points: list[str] | None = None,
) -> dict[str, Any]:
    """A compiled intent. `nodes` maps name → {facets, spec, validator, wake_source, ...};
    `edges` are (subscriber, producer, facet)."""
    topo_nodes, canonicalizers, postconditions, fingerprints, sources = [], [], [], {}, []
    for name, opts in sorted(nodes.items()):
        fp = opts.get("contract_fingerprint") or token({"contract": name, "v": opts.get("v", 1)})
        entry: dict[str, Any] = {
            "node": name,
            "contract_fingerprint": fp,
            "wake_source": opts.get("wake_source", "input"),
        }
        for key in ("cadence", "caller_inputs", "render", "runtime"):
            if key in opts:
                entry[key] = opts[key]
        topo_nodes.append(entry)
        fingerprints[name] = fp
        canonicalizers.append(
            {
                "node": name,
                "artifact": f"dist/canonicalizers/{name}.json",
                "facets": ["@atomic", *opts.get("facets", [])],
                "spec": opts.get("spec", {}),
            }
        )
        validator = opts.get("validator", {"mode": "deterministic"})
        postconditions.append(
            {
                "node": name,
                "artifact": f"dist/postconditions/{name}.json",
                "mode": validator["mode"],
                "validator": validator,
            }
        )
        sources.append({"path": f"src/{name}.prose.md", "kind": "responsibility", "name": name})
    return {
        "kind": "openprose.compile-phase-ir",
        "version": 2,
        "sources": sources,
        "topology": {
            "nodes": topo_nodes,
            "edges": [{"subscriber": s, "producer": p, "facet": f} for s, p, f in edges],
            "entry_points": entry_points or [],
            "acyclic": True,
        },
        "canonicalizers": canonicalizers,
        "postconditions": postconditions,
        "contract_fingerprints": fingerprints,
        "diagnostics": [],
    }


@dataclass
class Project:
    """A temporary OpenProse root driven through the real `prosec` executable."""

    root: Path

    @classmethod
    def create(cls, root: Path, doc: dict[str, Any], toml: str | None = None) -> Project:
        (root / "dist").mkdir(parents=True)
        (root / "renders").mkdir()
        (root / "world").mkdir()
        (root / "src").mkdir()
        shutil.copy(RENDER_SCRIPT, root / "renders/node.py")
        for source in doc["sources"]:
            (root / source["path"]).write_text(f"---\nname: {source['name']}\n---\n")
        (root / "dist/manifest.active.json").write_text(json.dumps(doc, indent=1))
        default = (
            "[render.default]\n"
            f'kind = "command"\ncommand = ["{sys.executable}", "renders/node.py"]\n'
        )
        (root / "prose.toml").write_text(toml if toml is not None else default)
        return cls(root)

    def set_intent(self, doc: dict[str, Any]) -> None:
        (self.root / "dist/manifest.active.json").write_text(json.dumps(doc, indent=1))

    def world(self, node: str, value: dict[str, Any]) -> None:
        (self.root / "world" / f"{node}.json").write_text(json.dumps(value))

    def prosec(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, **(env or {})}
        if env is None or "PROSEC_CRASH_AT" not in env:
            full_env.pop("PROSEC_CRASH_AT", None)
        return subprocess.run(
            [str(PROSEC), *args],
            cwd=self.root,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def run(self, *args: str, **kw: Any) -> dict[str, Any]:
        """`prosec run --json`; asserts the process did not crash; returns the summary."""
        result = self.prosec("run", ".", "--json", *args, **kw)
        assert result.returncode in (0, 1), result.stderr
        return json.loads(result.stdout)

    def renders(self) -> Counter[str]:
        log = self.root / "renders.log"
        return Counter(log.read_text().split()) if log.exists() else Counter()

    def reset_renders(self) -> None:
        (self.root / "renders.log").unlink(missing_ok=True)

    def ledger(self, node: str) -> list[dict[str, Any]]:
        path = self.root / "state/world-model" / node / "receipts.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def published(self, node: str) -> dict[str, Any] | None:
        path = self.root / "state/world-model" / node / "published/truth.json"
        return json.loads(path.read_text()) if path.exists() else None

    def run_dir(self, run_id: str) -> Path:
        return self.root / "runs" / run_id

    def log(self, run_id: str) -> list[str]:
        return (self.run_dir(run_id) / "vm.log.md").read_text().splitlines()
