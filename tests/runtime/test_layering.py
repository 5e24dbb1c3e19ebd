"""Layering: the runtime never imports the compiler; canonical.py stays dependency-light."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"


def test_runtime_never_imports_the_compiler() -> None:
    for path in sorted(RUNTIME.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
                if node.level and (node.module or "").startswith("compiler"):
                    names.append("prosec.compiler")
            assert not any(name.startswith("prosec.compiler") for name in names), path


def test_canonical_imports_no_heavy_libraries() -> None:
    code = (
        "import sys, prosec.runtime.canonical as c; "
        "heavy = {'jsonschema', 'yaml', 'psycopg', 'rich', 'click', 'rfc8785'}; "
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
