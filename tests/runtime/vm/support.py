"""A corpus program copied into a scratch project whose renders are the fake agent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...conftest import REPO
from ..project import PROSEC

FAKE_AGENT = Path(__file__).with_name("fake_agent.py")


@dataclass
class VmProject:
    root: Path
    entry: str  # the file run, relative to the root

    @classmethod
    def create(
        cls, tmp: Path, program: str, entry: str, table: dict[str, Any] | None = None
    ) -> VmProject:
        root = tmp / program
        shutil.copytree(REPO / "corpus" / program, root)
        (root / "table.json").write_text(json.dumps(table or {}))
        command = json.dumps([sys.executable, str(FAKE_AGENT), "table.json", "agent.log"])
        (root / "prose.toml").write_text(f'[render.default]\nkind = "agent"\ncommand = {command}\n')
        return cls(root, f"src/{entry}.prose.md")

    def table(self, table: dict[str, Any]) -> None:
        (self.root / "table.json").write_text(json.dumps(table))

    def source(self) -> str:
        return next(
            p.relative_to(self.root).as_posix() for p in (self.root / "src").glob("*.prose.md")
        )

    def prosec(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        full = {**os.environ, **(env or {})}
        return subprocess.run(
            [str(PROSEC), *args],
            cwd=self.root,
            env=full,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def run(self, *args: str, expect: int = 0, **kw: Any) -> dict[str, Any]:
        result = self.prosec("run", self.entry, "--json", *args, **kw)
        assert result.returncode == expect, result.stdout + result.stderr
        assert "Traceback" not in result.stderr
        outcome: dict[str, Any] = json.loads(result.stdout)
        return outcome

    def run_dir(self, run_id: str) -> Path:
        return self.root / "runs" / run_id

    def markers(self, run_id: str) -> list[str]:
        """vm.log.md's event lines, without the header and the end marker's timestamp."""
        lines = (self.run_dir(run_id) / "vm.log.md").read_text().splitlines()
        events = [line for line in lines if "→ " in line]
        ends = [line.split(" ")[0] for line in lines if line.startswith("---")]
        return events + ends

    def steps(self) -> list[str]:
        log = self.root / "agent.log"
        return log.read_text().splitlines() if log.is_file() else []
