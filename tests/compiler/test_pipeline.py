"""The pipeline driver: determinism, gating, and the sources of the compiled intent."""

from __future__ import annotations

import shutil
from pathlib import Path

from prosec.compiler.codegen.intent import dumps
from prosec.compiler.config import Config
from prosec.compiler.pipeline import PIPELINE, compile_project, compile_texts

from ..conftest import CORPUS
from .helpers import node


def test_pipeline_has_a_gate_before_validation() -> None:
    names = [step.name for step in PIPELINE]
    assert names.index("errors") == names.index("validate") - 1
    assert next(step for step in PIPELINE if step.name == "errors").gate


def test_same_sources_same_bytes_in_any_creation_order(tmp_path: Path) -> None:
    source = CORPUS / "wiring-fan-in"
    first = compile_project(source, Config())
    copy = tmp_path / "copy" / "src"
    copy.mkdir(parents=True)
    for path in sorted((source / "src").iterdir(), reverse=True):  # create in reverse order
        shutil.copyfile(path, copy / path.name)
    second = compile_project(copy.parent, Config())
    again = compile_project(source, Config())
    assert first.intent is not None
    assert dumps(first.intent) == dumps(again.intent or {}) == dumps(second.intent or {})


def test_errors_keep_the_intent_from_being_writable() -> None:
    result = compile_texts(
        [node("a", requires="- `y`: from `b`"), node("b", requires="- `value`: from `a`")],
        Config(),
    )
    assert result.has_errors and not result.writable
    assert result.intent is not None and result.intent["topology"]["acyclic"] is False


def test_an_ignored_cycle_is_still_never_writable() -> None:
    result = compile_texts(
        [node("a", requires="- `y`: from `b`"), node("b", requires="- `value`: from `a`")],
        Config(ignore=("wiring_cycle",)),
    )
    assert not result.has_errors and not result.writable


def test_sources_keep_every_file_with_its_kind() -> None:
    result = compile_texts(
        [node("a"), node("f", kind="function", maintains="", extra="### Returns\n\n- `r`: x")],
        Config(),
    )
    assert result.intent is not None
    assert result.intent["sources"] == [
        {"path": "src/a.prose.md", "kind": "responsibility", "name": "a"},
        {"path": "src/f.prose.md", "kind": "function", "name": "f"},
    ]


def test_diagnostics_carry_their_code_and_source() -> None:
    result = compile_texts([node("a", requires="- `nothing`: nowhere")], Config())
    assert result.intent is not None
    [record] = result.intent["diagnostics"]
    assert record["severity"] == "warning"
    assert record["message"].startswith("[wiring_unsatisfied] ")
    assert record["sourcePath"] == "src/a.prose.md"
