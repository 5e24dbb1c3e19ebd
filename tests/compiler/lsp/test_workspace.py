"""The workspace model: buffers over disk, per-file parse caching, projects and config."""

from __future__ import annotations

from pathlib import Path

import pytest
from prosec.compiler.config import ConfigError, load
from prosec.compiler.diagnostics import Severity
from prosec.compiler.lsp.disk import LocalDisk
from prosec.compiler.lsp.workspace import Workspace, normalize

from ...conftest import CORPUS
from .helpers import node, write

MAINTAINS = "\n### Maintains\n\nThe truth.\n\n### Tools\n\n(none)\n"


def _codes(workspace: Workspace, root: Path, display: str) -> list[str]:
    return [d.code for d in workspace.analysis(root).diagnostics_for(display)]


def test_open_buffers_win_over_the_disk(tmp_path: Path) -> None:
    root = write(
        tmp_path, {"a.prose.md": node("a", body=MAINTAINS, id_="067NC4KG01RG50R40M30E20918")}
    )
    workspace = Workspace(LocalDisk())
    assert _codes(workspace, root, "a.prose.md") == []
    workspace.open(root / "a.prose.md", node("a", body=MAINTAINS), 1)
    assert _codes(workspace, root, "a.prose.md") == ["id_missing"]
    workspace.close(root / "a.prose.md")
    assert _codes(workspace, root, "a.prose.md") == []


def test_a_keystroke_reparses_only_the_changed_file(tmp_path: Path) -> None:
    files = {f"n{i}.prose.md": node(f"n{i}", body=MAINTAINS) for i in range(5)}
    root = write(tmp_path, files)
    workspace = Workspace(LocalDisk())
    first = workspace.analysis(root)
    assert workspace.analysis(root) is first  # nothing changed: the same analysis
    workspace.open(root / "n0.prose.md", files["n0.prose.md"] + "\nMore text.\n", 2)
    second = workspace.analysis(root)
    assert second is not first
    before = {f.path: f for f in first.project.files}
    after = {f.path: f for f in second.project.files}
    assert after["n0.prose.md"] is not before["n0.prose.md"]
    assert all(after[p] is before[p] for p in after if p != "n0.prose.md")


def test_project_wide_rules_see_unsaved_buffers(tmp_path: Path) -> None:
    root = write(tmp_path, {"a.prose.md": node("a", body=MAINTAINS)})
    workspace = Workspace(LocalDisk())
    # a new, never saved file whose name clashes with a file on disk
    workspace.open(root / "b.prose.md", node("a", body=MAINTAINS), 1)
    analysis = workspace.analysis(root)
    assert "name_duplicate" in [d.code for d in analysis.diagnostics_for("b.prose.md")]


def test_files_changed_on_disk_are_noticed(tmp_path: Path) -> None:
    root = write(tmp_path, {"a.prose.md": node("a", body=MAINTAINS)})
    workspace = Workspace(LocalDisk())
    workspace.open(root / "a.prose.md", node("a", body=MAINTAINS), 1)
    assert [f.path for f in workspace.analysis(root).project.files] == ["a.prose.md"]
    (root / "b.prose.md").write_text(node("a", body=MAINTAINS), encoding="utf-8")
    assert workspace.refresh([root / "b.prose.md"]) == [root]
    analysis = workspace.analysis(root)
    assert [f.path for f in analysis.project.files] == ["a.prose.md", "b.prose.md"]
    assert "name_duplicate" in [d.code for d in analysis.diagnostics_for("b.prose.md")]
    # an edit outside the editor is seen by its stamp even without an event
    (root / "b.prose.md").write_text(node("b", body=MAINTAINS) + "\n\n", encoding="utf-8")
    assert "name_duplicate" not in [d.code for d in workspace.analysis(root).diagnostics]


def test_projects_are_grouped_like_prosec_lint(tmp_path: Path) -> None:
    outer = write(tmp_path / "outer", {"a.prose.md": node("a", body=MAINTAINS)})
    inner = write(tmp_path / "outer" / "inner", {"a.prose.md": node("a", body=MAINTAINS)})
    workspace = Workspace(LocalDisk())
    assert workspace.root_of(outer / "a.prose.md") == outer
    assert workspace.root_of(inner / "a.prose.md") == inner
    # the nested project is not part of the outer one: no duplicate name
    assert [f.path for f in workspace.analysis(outer).project.files] == ["a.prose.md"]
    workspace.folders = [outer]
    assert workspace.folder_roots() == [outer, inner]


def test_prose_toml_selects_and_overrides(tmp_path: Path) -> None:
    toml = '[lint]\nignore = ["id_missing"]\nseverity = { section_unknown = "error" }\n'
    body = MAINTAINS + "\n### Notes\n\nKept as text.\n"
    root = write(tmp_path, {"a.prose.md": node("a", body=body)}, toml)
    workspace = Workspace(LocalDisk())
    found = workspace.analysis(root).diagnostics
    assert [(d.code, d.severity) for d in found] == [("section_unknown", Severity.ERROR)]
    (root / "prose.toml").write_text("[lint]\nstrict = true\n# longer file\n", encoding="utf-8")
    found = workspace.analysis(root).diagnostics
    assert {(d.code, d.severity) for d in found} == {
        ("id_missing", Severity.ERROR),
        ("section_unknown", Severity.INFO),
    }


def test_a_broken_prose_toml_falls_back_to_defaults(tmp_path: Path) -> None:
    root = write(tmp_path, {"a.prose.md": node("a", body=MAINTAINS)}, "[lint\nstrict = ")
    analysis = Workspace(LocalDisk()).analysis(root)
    assert analysis.config_error is not None and "invalid TOML" in analysis.config_error
    assert [d.code for d in analysis.diagnostics_for("a.prose.md")] == ["id_missing"]
    (problem,) = analysis.diagnostics_for("prose.toml")
    assert (problem.code, problem.span.line) == ("config_invalid", 1)


def test_a_bad_setting_is_a_diagnostic_on_its_line_of_prose_toml() -> None:
    example = CORPUS / "invalid" / "config_invalid"
    analysis = Workspace(LocalDisk()).analysis(example)
    assert {d.code for d in analysis.diagnostics} == {"config_invalid"}
    (problem,) = analysis.diagnostics_for("prose.toml")
    assert problem.severity is Severity.ERROR
    assert problem.span.line == 4 and problem.message.startswith("lint.strict: ")
    # the same words every command prints before it exits 2
    with pytest.raises(ConfigError, match=r"prose\.toml:4: lint\.strict: "):
        load(example)


def test_a_file_over_the_live_limit_gets_one_diagnostic_and_no_analysis() -> None:
    example = CORPUS / "invalid" / "file_too_large"
    assert Workspace(LocalDisk()).analysis(example).diagnostics == ()
    analysis = Workspace(LocalDisk(), live_limit=200).analysis(example)
    (problem,) = analysis.diagnostics
    assert (problem.code, problem.severity, problem.span.line) == (
        "file_too_large",
        Severity.WARNING,
        1,
    )
    assert "the limit is 200" in problem.message and "prosec lint" in problem.message
    assert analysis.source("almanac.prose.md") is None  # never parsed


def test_unreadable_files_become_diagnostics(tmp_path: Path) -> None:
    root = write(tmp_path, {"a.prose.md": node("a", body=MAINTAINS)})
    (root / "b.prose.md").write_bytes(b"---\nname: \xff\n")
    analysis = Workspace(LocalDisk()).analysis(root)
    assert [d.code for d in analysis.diagnostics_for("b.prose.md")] == ["file_unreadable"]


def test_wiring_failures_are_reported_not_raised(tmp_path: Path) -> None:
    root = write(tmp_path, {"a.prose.md": node("a", body=MAINTAINS)})

    def broken(*_: object) -> object:
        raise RuntimeError("boom")

    analysis = Workspace(LocalDisk(), broken).analysis(root)  # type: ignore[arg-type]
    assert "internal_error" in [d.code for d in analysis.diagnostics]
    assert analysis.topology is None


def test_normalize_matches_how_lint_reads_files() -> None:
    assert normalize("\ufeffa\r\nb\rc\n") == "a\nb\nc\n"


def test_files_deleted_on_disk_leave_the_project(tmp_path: Path) -> None:
    root = write(tmp_path, {"a.prose.md": node("a", body=MAINTAINS), "b.prose.md": node("a")})
    workspace = Workspace(LocalDisk())
    assert "name_duplicate" in [d.code for d in workspace.analysis(root).diagnostics]
    (root / "b.prose.md").unlink()  # no file event: the stamp says it is gone
    analysis = workspace.analysis(root)
    assert [f.path for f in analysis.project.files] == ["a.prose.md"]
    assert [d.code for d in analysis.diagnostics] == ["id_missing"]
