"""The lint cache: an unchanged project is reported from the cache, anything that changes
its findings is linted again, a damaged cache is ignored, and cached output always equals
a cold lint's (random edit sequences, compared against `--no-cache`)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prosec.compiler import lint as lint_mod
from prosec.compiler import pipeline
from prosec.compiler.cache import project_dir
from prosec.compiler.config import Config, load
from prosec.compiler.discover import discover
from prosec.compiler.lint import lint_refs
from prosec.compiler.lint_cache import PARSES_FILE, RESULTS_FILE

from ..conftest import REPO, Runner

NEWSROOM = REPO / "corpus" / "newsroom"
AMBIGUOUS = REPO / "corpus" / "wiring-truth-ambiguous"


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def _lint(run_prosec: Runner, root: Path, cache: Path, *flags: str) -> tuple[int, str]:
    done = run_prosec("lint", *flags, ".", cwd=root, env={"PROSEC_CACHE_DIR": str(cache)})
    return done.returncode, done.stdout


def test_unchanged_project_is_reported_from_the_cache(run_prosec: Runner, tmp_path: Path) -> None:
    root = _copy(AMBIGUOUS, tmp_path / "p")
    cache = tmp_path / "cache"
    cold = _lint(run_prosec, root, cache)
    assert "wiring_ambiguous" in cold[1]
    folder = project_dir(cache, root)
    assert (folder / RESULTS_FILE).is_file() and (folder / PARSES_FILE).is_file()
    stamp = (folder / RESULTS_FILE).stat().st_mtime_ns
    assert _lint(run_prosec, root, cache) == cold
    assert (folder / RESULTS_FILE).stat().st_mtime_ns == stamp  # read, not rewritten
    assert _lint(run_prosec, root, cache, "--no-cache") == cold


def test_an_edit_is_linted_again(run_prosec: Runner, tmp_path: Path) -> None:
    root = _copy(NEWSROOM, tmp_path / "p")
    cache = tmp_path / "cache"
    assert _lint(run_prosec, root, cache) == (0, "")
    desk = root / "src" / "features-desk.prose.md"
    desk.write_text(desk.read_text().replace("kind: responsibility", "kind: service", 1))
    code, out = _lint(run_prosec, root, cache)
    assert code == 1 and "kind_retired" in out
    assert (code, out) == _lint(run_prosec, root, cache, "--no-cache")


def test_a_configuration_change_invalidates_the_result(run_prosec: Runner, tmp_path: Path) -> None:
    root = _copy(AMBIGUOUS, tmp_path / "p")
    cache = tmp_path / "cache"
    assert "warning wiring_ambiguous" in _lint(run_prosec, root, cache)[1]
    # a command-line setting is part of the key
    code, out = _lint(run_prosec, root, cache, "--strict")
    assert code == 1 and "error wiring_ambiguous" in out
    assert _lint(run_prosec, root, cache, "--ignore", "wiring_ambiguous") == (0, "")
    # and so is prose.toml
    toml = root / "prose.toml"
    before = toml.read_text() if toml.is_file() else ""
    toml.write_text(before + '\n[lint]\nignore = ["wiring_ambiguous"]\n')
    assert _lint(run_prosec, root, cache) == (0, "")
    toml.write_text(before)
    assert "warning wiring_ambiguous" in _lint(run_prosec, root, cache)[1]


@pytest.mark.parametrize(
    "damage",
    [b"", b"{not json", b"[]", b'{"header": {}, "results": []}', b"\x00\xff" * 64],
    ids=["empty", "truncated", "array", "foreign-header", "binary"],
)
def test_a_damaged_cache_is_ignored(run_prosec: Runner, tmp_path: Path, damage: bytes) -> None:
    root = _copy(AMBIGUOUS, tmp_path / "p")
    cache = tmp_path / "cache"
    cold = _lint(run_prosec, root, cache)
    folder = project_dir(cache, root)
    for name in (RESULTS_FILE, PARSES_FILE):
        (folder / name).write_bytes(damage)
    assert _lint(run_prosec, root, cache) == cold
    # the next lint rewrote a usable cache
    assert (folder / RESULTS_FILE).read_bytes() != damage


# -- random edit sequences: cached output == cold output, always ---------------------------

EDITS = st.lists(
    st.tuples(
        st.sampled_from(["append", "drop-line", "retire-kind", "duplicate", "remove", "config"]),
        st.integers(min_value=0, max_value=1000),
    ),
    min_size=1,
    max_size=6,
)


def _edit(root: Path, op: str, pick: int) -> None:
    files = sorted((root / "src").glob("*.prose.md"))
    if not files:
        return
    target = files[pick % len(files)]
    text = target.read_text()
    if op == "append":
        target.write_text(text + f"\nOne more sentence {pick}.\n")
    elif op == "drop-line":
        lines = text.split("\n")
        del lines[pick % len(lines)]
        target.write_text("\n".join(lines))
    elif op == "retire-kind":
        target.write_text(text.replace("kind: responsibility", "kind: service", 1))
    elif op == "duplicate":
        (root / "src" / f"copy-{pick}.prose.md").write_text(text)
    elif op == "remove" and len(files) > 1:
        target.unlink()
    elif op == "config":
        toml = root / "prose.toml"
        strict = "strict = true" in (toml.read_text() if toml.is_file() else "")
        toml.write_text("" if strict else "[lint]\nstrict = true\n")


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(edits=EDITS)
def test_cached_lint_equals_cold_lint(edits: list[tuple[str, int]]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = _copy(NEWSROOM, Path(scratch) / "p")
        cache = Path(scratch) / "cache"

        def both() -> None:
            refs = discover([root], root)
            cached = lint_refs(refs, Config(), base=root, configs=load, cache_dir=cache)
            again = lint_refs(refs, Config(), base=root, configs=load, cache_dir=cache)
            cold = lint_refs(refs, Config(), base=root, configs=load)
            assert cached.diagnostics == again.diagnostics == cold.diagnostics

        both()
        for op, pick in edits:
            _edit(root, op, pick)
            both()


def test_an_unchanged_project_is_not_analysed_or_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _copy(NEWSROOM, tmp_path / "p")
    cache = tmp_path / "cache"
    refs = discover([root], root)
    lint_refs(refs, load(root), base=root, cache_dir=cache)
    calls: list[str] = []
    analyse, parse = pipeline.analyse, lint_mod.parse_texts
    monkeypatch.setattr(
        pipeline, "analyse", lambda *a, **k: calls.append("analyse") or analyse(*a, **k)
    )
    monkeypatch.setattr(
        lint_mod, "parse_texts", lambda texts: calls.append(f"parse {len(texts)}") or parse(texts)
    )
    lint_refs(refs, load(root), base=root, cache_dir=cache)
    assert calls == []
    desk = root / "src" / "features-desk.prose.md"
    desk.write_text(desk.read_text() + "\nOne more sentence.\n")
    lint_refs(refs, load(root), base=root, cache_dir=cache)
    assert calls == ["parse 1", "analyse"]  # only the edited file is parsed again
