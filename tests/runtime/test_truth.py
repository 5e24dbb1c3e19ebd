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
    with pytest.raises(TruthError, match=r"bad\.json: not JSON \(line 2 column"):
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


def _nested_block(depth: int) -> str:
    return "".join("  " * i + "k:\n" for i in range(depth)) + "  " * depth + "v\n"


BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8)
)


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        ({"t.json": b'{"x": 1e400}'}, r"t\.json: the number 1e400 is out of range"),
        ({"t.json": b"[" * 101 + b"]" * 101}, r"t\.json: nested deeper than 100"),
        ({"t.yaml": b"x: 1.0e+400\n"}, r"t\.yaml: YAML value inf"),
        ({"t.yaml": b"x: " + b"7" * 5000 + b"\n"}, r"t\.yaml: invalid YAML value"),
        ({"t.yaml": b"[" * 5000 + b"]" * 5000}, r"t\.yaml: "),
        ({"t.yaml": _nested_block(101).encode()}, r"t\.yaml: YAML nested deeper than 100"),
        ({"t.md": f"---\n{_nested_block(5000)}---\n".encode()}, r"t\.md: "),
        ({"t.yaml": BOMB.encode()}, r"t\.yaml: YAML with more than 100,000 values"),
        ({"/".join(["d"] * 33) + ".json": b"1"}, r"deeper than 32 folders"),
    ],
)
def test_values_without_a_bounded_canonical_form_are_refused(
    files: dict[str, bytes], problem: str
) -> None:
    with pytest.raises(TruthError, match=problem):
        build_truth(files)


def test_values_at_the_limits_are_kept() -> None:
    deep = "[" * 100 + "]" * 100
    truth = build_truth({"/".join(["d"] * 31) + "/t.json": deep.encode()})
    assert truth.structured
    assert build_truth({"t.yaml": _nested_block(99).encode()}).structured
