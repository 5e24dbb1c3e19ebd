"""The pipeline driver: determinism, gating, and the sources of the compiled intent."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import pytest
from prosec.compiler import pipeline
from prosec.compiler.codegen.intent import dumps
from prosec.compiler.config import Config
from prosec.compiler.diagnostics import Diagnostic, Severity
from prosec.compiler.ir import Project, Span
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


class _CountedSpan:
    """A span whose `path` counts its reads (how often `_parse` looks at a diagnostic)."""

    def __init__(self, path: str, reads: list[int]) -> None:
        self._path, self._reads = path, reads

    @property
    def path(self) -> str:
        self._reads[0] += 1
        return self._path


class _RecordingCache:
    def __init__(self) -> None:
        self.put_diagnostics: dict[str, list[Diagnostic]] = {}

    def get(self, path: str, digest: str, text: str) -> None:
        return None

    def put(self, path: str, digest: str, source: object, found: list[Diagnostic]) -> None:
        self.put_diagnostics[path] = found


def test_parse_files_each_diagnostic_once_not_once_per_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`_parse` hands each file's own parse diagnostics to the cache in one pass over
    them: reads of a diagnostic's path grow with files + diagnostics, not their product."""
    reads = [0]
    real = pipeline.parse_texts

    def counted(texts: Sequence[tuple[str, str]]) -> tuple[Project, list[Diagnostic]]:
        project, found = real(texts)
        extra = [
            Diagnostic(
                code="file_unreadable",
                severity=Severity.INFO,
                message=f"finding {i}",
                span=cast(Span, _CountedSpan(path, reads)),
            )
            for path, _ in texts
            for i in range(2)
        ]
        return project, [*found, *extra]

    monkeypatch.setattr(pipeline, "parse_texts", counted)
    texts = [
        (f"src/n{i}.prose.md", f"---\nname: n{i}\nkind: service\n---\n\n# N{i}\n")
        for i in range(300)
    ]
    cache = _RecordingCache()
    project, _found, reparsed = pipeline._parse(texts, cache)
    assert reparsed == 300 and len(project.files) == 300
    assert reads[0] <= 2 * 600  # 300 files × 300×2 findings would be 180,000
    for path, _ in texts:
        mine = [d for d in cache.put_diagnostics[path] if isinstance(d.span, _CountedSpan)]
        assert [d.message for d in mine] == ["finding 0", "finding 1"]
