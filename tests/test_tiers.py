"""`make test` reads nothing beside the checkout: every use of the upstream corpus or the
reference vectors in a test module sits in a `conformance`-marked test.

The fixtures `upstream` and `reference_vectors` are checked when tests are collected
(conftest.py); this catches the other way in, a module that reads `UPSTREAM` (or calls
the helpers of `upstream_support`) at import or inside an unmarked test, which the
default tier would then read whenever the upstream checkout happens to sit beside the clone.
"""

from __future__ import annotations

import ast
from pathlib import Path

from .conftest import REPO

TESTS = REPO / "tests"
UPSTREAM_NAMES = {"UPSTREAM", "REFERENCE_VECTORS", "upstream_systems", "library_files"}
UPSTREAM_NAMES |= {"upstream_programs"}
# where the names are defined; benchmarks run only in `make bench`, which needs UPSTREAM
EXEMPT = {TESTS / "conftest.py", TESTS / "compiler" / "upstream_support.py"}


def _conformance(decorators: list[ast.expr]) -> bool:
    return any("mark.conformance" in ast.unparse(d) for d in decorators)


def _module_marked(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
        and "mark.conformance" in ast.unparse(node.value)
        for node in tree.body
    )


def unmarked_uses(path: Path) -> list[str]:
    """`DIR/FILE:LINE NAME` for each use of an upstream name outside a conformance test."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if _module_marked(tree):
        return []
    found = []
    for statement in tree.body:
        if isinstance(
            statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
        ) and _conformance(statement.decorator_list):
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and node.id in UPSTREAM_NAMES:
                found.append(f"{path.relative_to(path.parents[1])}:{node.lineno} {node.id}")
    return found


def test_upstream_is_read_only_by_conformance_tests() -> None:
    modules = [
        p for p in sorted(TESTS.rglob("*.py")) if p not in EXEMPT and "benchmarks" not in p.parts
    ]
    assert len(modules) > 100
    assert [use for module in modules for use in unmarked_uses(module)] == []


def test_the_check_sees_a_module_level_read(tmp_path: Path) -> None:
    # the shape this check was written for: samples drawn from upstream at import
    module = tmp_path / "compiler" / "test_probe.py"
    module.parent.mkdir()
    module.write_text(
        "from .conftest import UPSTREAM\n"
        "import pytest\n\n"
        "SAMPLES = sorted(UPSTREAM.rglob('*.prose.md'))\n\n"
        "@pytest.mark.conformance\n"
        "def test_marked() -> None:\n"
        "    assert UPSTREAM.is_dir()\n\n"
        "def test_unmarked() -> None:\n"
        "    assert UPSTREAM.is_dir()\n",
        encoding="utf-8",
    )
    assert unmarked_uses(module) == [
        "compiler/test_probe.py:4 UPSTREAM",
        "compiler/test_probe.py:11 UPSTREAM",
    ]
