"""Artifact files → structured truth (DESIGN §6)."""

from __future__ import annotations

import pytest
from prosec.runtime.truth import TruthError, build_truth, normalize_text


def test_json_yaml_and_frontmatter_land_at_their_key_paths() -> None:
    truth = build_truth(
        {
            "published/funding/events.json": b'[{"round": "A"}]',
            "hiring/roles.yaml": b"open: 3\n",
            "competitors.md": b"---\nname: Acme\n---\n\n# Acme\nprose body\n",
            "notes.txt": b"free text is a projection",
        }
    )
    assert truth.structured
    assert truth.value == {
        "funding": {"events": [{"round": "A"}]},
        "hiring": {"roles": {"open": 3}},
        "competitors": {"name": "Acme"},
    }


def test_unstructured_artifact_is_its_normalized_text() -> None:
    truth = build_truth({"report.md": b"# Report  \r\nline\r\n\r\n", "x/y.txt": b"a\n"})
    assert not truth.structured
    assert truth.value == {"report": "# Report\nline", "x": {"y": "a"}}


def test_empty_artifact() -> None:
    assert build_truth({}).value == {}


def test_normalize_text() -> None:
    assert normalize_text("a \r\nb\t\n\n\n") == "a\nb"


@pytest.mark.parametrize(
    "files",
    [
        {"a.json": b"{}", "a.yaml": b"{}"},
        {"a.json": b'{"b": 1}', "a/b.json": b"2"},
        {"a.json": b"1", "a/b.json": b"2"},
    ],
)
def test_key_clashes_are_errors(files: dict[str, bytes]) -> None:
    with pytest.raises(TruthError):
        build_truth(files)


def test_parse_errors_name_file_and_line() -> None:
    with pytest.raises(TruthError, match=r"bad\.json: line 2 column"):
        build_truth({"bad.json": b'{\n"a": }'})
    with pytest.raises(TruthError, match=r"doc\.md: line 3: invalid YAML"):
        build_truth({"doc.md": b"---\na: 1\nb: [\n---\n"})


def test_yaml_dates_become_strings() -> None:
    assert build_truth({"d.yaml": b"when: 2026-01-02\n"}).value == {"d": {"when": "2026-01-02"}}


@pytest.mark.parametrize(
    "files",
    [{"a.json": b'{"x": NaN}'}, {"a.json": b"[Infinity]"}, {"a.yaml": b"x: .nan\n"}],
)
def test_non_finite_numbers_are_refused(files: dict[str, bytes]) -> None:
    with pytest.raises(TruthError, match="not a JSON number"):
        build_truth(files)
