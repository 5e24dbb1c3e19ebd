"""`prosec install` and `prosec preflight` read what a legacy `.prose` program (seed 000)
`use`s, as they read a `.prose.md` source's dependencies: a project whose only program
is a legacy one gets its dependency installed, and the program runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ...runtime.vm.support import FAKE_AGENT
from .test_corpus_program import publish_library

PROSEC = Path(sys.executable).parent / "prosec"
MENU = """# Menu pricing (a legacy .prose program, written for prosec's tests)

input dish: "The dish to price"

use "example.org/acme/kitchen-lib/src/price-menu" as price_menu

output price = call price_menu
  dish: dish
"""


def prosec(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PROSEC), *args], cwd=root, capture_output=True, text=True, timeout=120
    )


def test_a_legacy_programs_dependency_is_installed_and_it_runs(tmp_path: Path) -> None:
    root = tmp_path / "menu"
    root.mkdir()
    commit = publish_library(root / "mirror", tmp_path / "work")
    command = json.dumps([sys.executable, str(FAKE_AGENT), "table.json", "agent.log"])
    (root / "prose.toml").write_text(
        f'[deps]\n"example.org" = "mirror"\n\n[render.default]\nkind = "agent"\n'
        f"command = {command}\n"
    )
    (root / "table.json").write_text("{}")
    (root / "menu.prose").write_text(MENU)
    installed = prosec(root, "install")
    assert installed.returncode == 0, installed.stderr
    assert "no dependencies to install" not in installed.stderr
    assert f"example.org/acme/kitchen-lib {commit}" in (root / "prose.lock").read_text()
    assert (root / "deps/example.org/acme/kitchen-lib/src/price-menu.prose.md").is_file()
    checked = prosec(root, "preflight")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "kitchen-lib" in checked.stdout
    ran = prosec(root, "run", "menu.prose", "--dish", "soup", "--json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["result"].startswith("price-menu:")
