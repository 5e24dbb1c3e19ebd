"""`prosec lint FILE` stays lean: heavy libraries load only in the commands that need them."""

from __future__ import annotations

import json
import subprocess
import sys

from ..conftest import CORPUS

HEAVY = ("rich", "jsonschema", "networkx", "lark", "pygls", "lsprotocol", "psycopg", "yaml")

_PROBE = """
import json, sys
sys.argv = ["prosec", "lint", sys.argv[1]]
from prosec.compiler.cli import main
try:
    main()
except SystemExit as exit:
    code = exit.code
print(json.dumps({"exit": code, "modules": sorted(sys.modules)}))
"""


def _modules_after_lint(target: str) -> tuple[int, set[str]]:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, target], capture_output=True, text=True, timeout=60
    )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    return report["exit"], set(report["modules"])


def test_lint_of_one_file_imports_no_heavy_library() -> None:
    code, modules = _modules_after_lint(
        str(CORPUS / "greenhouse-climate/src/climate-state.prose.md")
    )
    assert code == 0
    assert sorted({m.split(".")[0] for m in modules} & set(HEAVY)) == []
    assert "importlib.metadata" not in modules  # the version is a constant
    # the ProseScript rule is in the chain, but its parser and IR wait for a prose fence
    assert "prosec.compiler.prosescript" in modules
    assert sorted(m for m in modules if m.startswith("prosec.compiler.prosescript.")) == [
        "prosec.compiler.prosescript.rule",
        "prosec.compiler.prosescript.scope",
    ]


def test_version_needs_no_lint_machinery() -> None:
    probe = (
        "import sys\nsys.argv=['prosec','--version']\nfrom prosec.compiler.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('markdown_it', 'prosec.compiler.lint'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_version_answers_before_click_loads() -> None:
    probe = (
        "import sys\nsys.argv=['prosec','-V']\nfrom prosec.compiler.cli import main\n"
        "try:\n    main()\nexcept SystemExit as exit:\n    print('exit', exit.code)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('click', 'rich')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    from prosec.compiler import __version__

    assert result.stdout.strip().splitlines() == [f"prosec, version {__version__}", "exit 0", "[]"]
