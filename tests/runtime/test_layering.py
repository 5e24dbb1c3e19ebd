"""canonical.py stays dependency-light. (That the runtime never imports the compiler is an
import-linter contract in pyproject.toml, run by `make lint`; see tests/test_architecture.py.)"""

from __future__ import annotations

import subprocess
import sys


def test_canonical_imports_no_heavy_libraries() -> None:
    code = (
        "import sys, prosec.runtime.canonical as c; "
        "heavy = {'jsonschema', 'yaml', 'psycopg', 'rich', 'click', 'rfc8785'}; "
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
