"""corpus/invalid/<code>/ for the build's codes: each program builds with exactly its code."""

from __future__ import annotations

from pathlib import Path

import pytest
from prosec.compiler import config
from prosec.compiler.diagnostics import CODES
from prosec.compiler.host import SystemHost
from prosec.compiler.pipeline import compile_project

from ..conftest import CORPUS
from .corpus_support import BUILD_CODES, BUILD_ONLY_CODES, HOST_CODES


@pytest.mark.parametrize("code", [*BUILD_CODES, *BUILD_ONLY_CODES])
def test_example_builds_with_exactly_its_code(code: str) -> None:
    assert code in CODES
    root: Path = CORPUS / "invalid" / code
    result = compile_project(root, config.load(root).with_overrides(offline_tools=True))
    assert {d.code for d in result.diagnostics} == {code}
    for diagnostic in result.diagnostics:
        target = root / diagnostic.span.path
        # an empty project's finding names its source directory; every other one a file
        assert target.is_dir() if code in BUILD_ONLY_CODES else target.is_file()


def test_empty_project_builds_the_empty_manifest() -> None:
    root = CORPUS / "invalid" / "sources_empty"
    result = compile_project(root, config.load(root))
    assert result.writable and result.intent is not None
    assert result.intent["topology"]["nodes"] == [] and result.intent["sources"] == []
    (record,) = result.intent["diagnostics"]
    assert record["severity"] == "info" and record["message"].startswith("[sources_empty] ")


@pytest.mark.parametrize("code", HOST_CODES)
def test_host_lookup_examples(code: str, tmp_path: Path) -> None:
    root = CORPUS / "invalid" / code
    host = SystemHost(root=root, path_env=str(tmp_path), home=tmp_path)
    result = compile_project(root, config.load(root), host=host)
    assert {d.code for d in result.diagnostics} == {code}
