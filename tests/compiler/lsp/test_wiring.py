"""The wiring features as pure functions over a real Forme run (no server)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from prosec.compiler.config import Config
from prosec.compiler.diagnostics import Diagnostic
from prosec.compiler.ir import Contract, Project
from prosec.compiler.lint import parse_texts
from prosec.compiler.lowered import CanonicalizerSpec
from prosec.compiler.lsp import completion, hover, navigation, wiring
from prosec.compiler.lsp.disk import LocalDisk
from prosec.compiler.lsp.workspace import Analysis, Workspace
from prosec.compiler.passes import canonicalize

from ...conftest import CORPUS
from .client import EDITOR_PROJECT
from .helpers import node, write

DIGEST = node(
    "digest",
    body="\n### Requires\n\n- `accounts` (atomic): every account, as one truth\n\n"
    "### Maintains\n\n#### text\nThe digest.\n\n- `body`: the text\n",
)


def _analysis(tmp_path: Path, extra: dict[str, str] | None = None) -> Analysis:
    root = tmp_path / "editor"
    shutil.copytree(EDITOR_PROJECT, root)
    write(root, extra or {}, toml=None)
    return Workspace(LocalDisk(), wiring.wire).analysis(root)


def _line(analysis: Analysis, display: str, prefix: str) -> int:
    source = analysis.source(display)
    assert source is not None
    return next(i for i, t in enumerate(source.text.split("\n"), 1) if t.startswith(prefix))


def test_atomic_subscriptions_point_at_maintains(tmp_path: Path) -> None:
    analysis = _analysis(tmp_path, {"src/digest.prose.md": DIGEST})
    need = _line(analysis, "src/digest.prose.md", "- `accounts`")
    (target,) = navigation.definition(analysis, "src/digest.prose.md", need, 5)
    assert (target.path, target.line) == (
        "src/accounts.prose.md",
        _line(analysis, "src/accounts.prose.md", "### Maintains"),
    )
    maintains = _line(analysis, "src/accounts.prose.md", "### Maintains")
    found = navigation.references(analysis, "src/accounts.prose.md", maintains, 5, False)
    assert [(s.path, s.line) for s in found] == [("src/digest.prose.md", need)]


def test_references_from_a_node_name_list_every_subscriber(tmp_path: Path) -> None:
    analysis = _analysis(tmp_path, {"src/digest.prose.md": DIGEST})
    found = navigation.references(analysis, "src/accounts.prose.md", 2, 8, True)
    assert [s.path for s in found] == [
        "src/accounts.prose.md",
        "src/digest.prose.md",
        "src/outreach.prose.md",
    ]
    text = hover.hover(analysis, "src/accounts.prose.md", 2, 8)
    assert text is not None
    assert "Reads from: `signals`" in text.markdown
    assert "Read by: `digest`, `outreach`" in text.markdown


def test_requires_completion_after_a_producer_offers_its_facets(tmp_path: Path) -> None:
    analysis = _analysis(tmp_path, {"src/digest.prose.md": DIGEST + "\n"})
    need = _line(analysis, "src/digest.prose.md", "- `accounts`")
    items = completion.complete(analysis, "src/digest.prose.md", need, len("- `accounts") + 1)
    assert "accounts.enrichment" in [i.label for i in items]
    assert "digest" not in [i.label for i in items]


def test_candidates_split_on_the_longest_node_name(tmp_path: Path) -> None:
    analysis = _analysis(
        tmp_path,
        {"src/dotted.prose.md": node("acc.ounts", body="\n### Maintains\n\n#### x\nX.\n")},
    )
    assert wiring.split_candidate(analysis, "acc.ounts.x") == ("acc.ounts", "x")
    assert wiring.split_candidate(analysis, "accounts.summary") == ("accounts", "summary")
    assert wiring.split_candidate(analysis, "market") == ("market", "@atomic")


def test_files_outside_the_source_root_are_linted_but_not_wired(tmp_path: Path) -> None:
    analysis = _analysis(tmp_path, {"drafts/idea.prose.md": DIGEST.replace("digest", "idea")})
    assert "drafts/idea.prose.md" in analysis.paths and "drafts/idea.prose.md" not in analysis.wired
    assert "id_missing" in [d.code for d in analysis.diagnostics_for("drafts/idea.prose.md")]
    need = _line(analysis, "drafts/idea.prose.md", "- `accounts`")
    text = hover.hover(analysis, "drafts/idea.prose.md", need, 5)
    assert text is not None and "outside the source root" in text.markdown
    assert all(r.subscriber != "idea" for r in analysis.topology.resolutions)  # type: ignore[union-attr]


def test_the_caching_wiring_finds_exactly_what_the_build_passes_find() -> None:
    _check_caching_wiring(CORPUS)


@pytest.mark.conformance
def test_the_caching_wiring_agrees_on_the_upstream_corpus(upstream: Path) -> None:
    _check_caching_wiring(upstream)


def _check_caching_wiring(folder: Path) -> None:
    cached = wiring.Wiring()
    workspace = Workspace(LocalDisk(), cached)
    workspace.folders = [folder, EDITOR_PROJECT]
    for root in workspace.folder_roots():
        analysis = workspace.analysis(root)
        project = Project(
            files=tuple(f for f in analysis.project.files if f.path in analysis.wired)
        )
        if not project.files:
            continue
        reference = wiring.wire(_unexpanded(project), analysis.config)[2]
        again = cached(_unexpanded(project), analysis.config)[2]
        assert sorted(reference, key=Diagnostic.sort_key) == sorted(again, key=Diagnostic.sort_key)
    # an edit re-lowers the changed contract only, and still agrees
    path = EDITOR_PROJECT / "src" / "market.prose.md"
    text = path.read_text("utf-8").replace("#### trends\n", "#### trends\nImmaterial: ranks.\n")
    workspace.open(path, text, 2)
    analysis = workspace.analysis(workspace.root_of(path))
    assert "clause_unlowered" in [d.code for d in analysis.diagnostics_for("src/market.prose.md")]


def test_the_caching_wiring_lowers_by_value(monkeypatch: pytest.MonkeyPatch) -> None:
    lowered: list[str] = []
    real = canonicalize.lower

    def counting(contract: Contract) -> tuple[CanonicalizerSpec, list[Diagnostic]]:
        lowered.append(contract.name)
        return real(contract)

    monkeypatch.setattr(wiring.canonicalize, "lower", counting)
    cached = wiring.Wiring()
    texts = [
        (f"src/{path.name}", path.read_text("utf-8"))
        for path in sorted((EDITOR_PROJECT / "src").glob("*.prose.md"))
    ]
    first = cached(parse_texts(texts)[0], Config())[2]
    nodes = sorted(lowered)
    assert nodes  # the editor project has nodes to lower
    lowered.clear()
    # the same files parsed again are new objects but equal values: nothing is lowered
    again = cached(parse_texts(texts)[0], Config())[2]
    assert lowered == [] and again == first
    # an edit lowers the edited contract only
    edited = [
        (p, t.replace("#### trends\n", "#### trends\nImmaterial: ranks.\n")) for p, t in texts
    ]
    assert edited != texts
    changed = cached(parse_texts(edited)[0], Config())[2]
    assert lowered == ["market"]
    assert "clause_unlowered" in [d.code for d in changed]


def _unexpanded(project: Project) -> Project:
    return Project(
        files=tuple(
            replace(f, contracts=tuple(c for c in f.contracts if c.expanded_from is None))
            for f in project.files
        )
    )


def test_facet_need_headings_complete_to_facets(tmp_path: Path) -> None:
    analysis = _analysis(
        tmp_path, {"src/digest.prose.md": DIGEST.replace("- `accounts` (atomic)", "#### tr")}
    )
    line = _line(analysis, "src/digest.prose.md", "#### tr")
    items = completion.complete(analysis, "src/digest.prose.md", line, len("#### tr") + 1)
    labels = [i.label for i in items]
    assert "trends" in labels and "enrichment" in labels and "text" not in labels
    (trends,) = [i for i in items if i.label == "trends"]
    assert (trends.replace.column, trends.replace.end_column) == (6, 8)


def test_a_template_hovers_with_its_mounts_and_their_edges() -> None:
    analysis = Workspace(LocalDisk(), wiring.wire).analysis(CORPUS / "wiring-template")
    display = "src/crane-monitor.prose.md"
    found = hover.hover(analysis, display, 2, 8)
    assert found is not None
    text = found.markdown
    assert "Template over `crane`, mounted as `crane-monitor[east]`" in text
    assert "Reads from: `crane-telemetry`" in text and "Read by: `harbour-board`" in text
    # the workspace reports what `prosec build` reports for the program: nothing
    assert analysis.diagnostics == ()
