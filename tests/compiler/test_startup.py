"""`prosec lint FILE` stays lean: heavy libraries load only in the commands that need them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


_CONSOLE = """
import atexit, sys
atexit.register(lambda: print("atexit ran", file=sys.stderr))
sys.argv = ["prosec", *sys.argv[1:]]
from prosec.compiler.cli import console
console()
"""


def test_build_and_lint_end_with_a_hard_exit_after_flushing(tmp_path: Path) -> None:
    """`console` (the executable) ends `build` and `lint` with os._exit: exit-time work
    is skipped, yet the whole output, through a pipe, and the exit status survive."""
    broken = tmp_path / "src" / "broken.prose.md"
    broken.parent.mkdir()
    broken.write_text("---\nname: broken\nkind: nonsense\n---\n\n# Broken\n" + "x\n" * 2000)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", _CONSOLE, *args], capture_output=True, text=True, timeout=60
        )

    build = run("build", str(tmp_path), "--offline-tools", "--no-cache")
    assert build.returncode == 1
    assert "kind_unknown" in build.stdout and "atexit ran" not in build.stderr
    lint = run("lint", str(broken), "--format", "json")
    assert lint.returncode == 1 and json.loads(lint.stdout)  # complete JSON on stdout
    assert "atexit ran" not in lint.stderr
    usage = run("build", str(tmp_path / "missing"))
    assert usage.returncode == 2 and "missing" in usage.stderr
    other = run("--help")  # any other command exits as the interpreter does
    assert other.returncode == 0 and "atexit ran" in other.stderr
