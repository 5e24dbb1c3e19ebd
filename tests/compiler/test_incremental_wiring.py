"""Incremental wiring: after random edits, additions, deletions and renames, a build that
reuses the last build's Forme memo writes the bytes a cold build (`--no-cache`) writes."""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import orjson
import pytest
from prosec.compiler.build import BuildOptions, BuildOutcome, build
from prosec.compiler.cache import WIRING_FILE, project_dir
from prosec.compiler.config import Config

from ..benchmarks.synth import WORDS, generate
from ..conftest import Runner

CONFIG = Config(offline_tools=True)
_NAME = re.compile(r"^name: (\S+)$", re.MULTILINE)


def _build(root: Path, cache: Path | None) -> BuildOutcome:
    return build(root, CONFIG, None, BuildOptions(cache_dir=cache))


def _manifest(root: Path) -> bytes:
    return (root / "dist" / "manifest.next.json").read_bytes()


def _sources(root: Path) -> tuple[bytes, dict[str, bytes]]:
    """dist/sources.next.json and the bytes of every blob it lists."""
    listed = (root / "dist" / "sources.next.json").read_bytes()
    store = root / "dist" / "sources"
    blobs = orjson.loads(listed)["sources"].values()
    return listed, {d: (store / d.removeprefix("sha256:")).read_bytes() for d in blobs}


def _names(root: Path) -> dict[Path, str]:
    found = {}
    for path in sorted((root / "src").glob("*.prose.md")):
        match = _NAME.search(path.read_text(encoding="utf-8"))
        if match:
            found[path] = match.group(1)
    return found


def _mutate(root: Path, rng: random.Random, step: int) -> str:
    """One random change of the kinds a project sees; returns what it did."""
    names = _names(root)
    paths = [p for p in names if p.name != "researcher.prose.md"]
    path = rng.choice(paths)
    text = path.read_text(encoding="utf-8")
    kind = rng.choice(["append", "need", "add", "delete", "rename", "facet", "mention", "prose"])
    if kind == "prose":  # a ```prose fence calls another target (the kept lint findings)
        scripts = [p for p in paths if "```prose\n" in p.read_text(encoding="utf-8")]
        path = rng.choice(scripts) if scripts else path
        text = path.read_text(encoding="utf-8")
    if kind == "append":
        path.write_text(text + f"\nOne more sentence, number {step}.\n", encoding="utf-8")
    elif kind == "need" and "### Requires\n\n" in text:
        other = rng.choice(list(names.values()))
        need = rng.choice(
            [
                f"- `{other}-state`: what `{other}` keeps current, via `@atomic`",
                f"- the latest picture from the {other.replace('-', ' ')} node",
                f"- `summary-view`: the `summary` facet of `{other}`",
                f"- `{rng.choice(WORDS)}`: whatever moved",
            ]
        )
        path.write_text(text.replace("### Requires\n\n", f"### Requires\n\n{need}\n", 1))
    elif kind == "add":
        name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-new{step}"
        copied = _NAME.sub(f"name: {name}", text, count=1)
        copied = re.sub(r"^id: .*$", "", copied, count=1, flags=re.MULTILINE)
        (path.parent / f"{name}.prose.md").write_text(copied, encoding="utf-8")
    elif kind == "delete":
        path.unlink()
    elif kind == "rename":
        name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-renamed{step}"
        renamed = _NAME.sub(f"name: {name}", text, count=1)
        renamed = re.sub(r"^id: .*$", "", renamed, count=1, flags=re.MULTILINE)
        path.unlink()
        (path.parent / f"{name}.prose.md").write_text(renamed, encoding="utf-8")
    elif kind == "facet" and "### Maintains\n" in text:
        facet = rng.choice(["summary", "history", "risk", "extra"])
        addition = f"\n#### {facet}\n\nThe {facet} of it. Material: `{facet}_items`.\n"
        path.write_text(text.replace("### Continuity", addition + "\n### Continuity", 1))
    elif kind == "prose" and "```prose\n" in text:
        target = rng.choice([*names.values(), "nowhere-to-be-found", "researcher"])
        script = f"```prose\nlet found = call {target}\n  topic: market\nreturn found\n```"
        path.write_text(re.sub(r"```prose\n.*?```", script, text, count=1, flags=re.DOTALL))
    else:  # a title or a name mentioned in words changes the mentioned rung's forms
        title = f"# {rng.choice(WORDS).title()} Gateway"
        path.write_text(re.sub(r"^# .*$", title, text, count=1, flags=re.MULTILINE))
    return kind


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_incremental_equals_cold_after_random_changes(tmp_path: Path, seed: int) -> None:
    root, cache, cold = tmp_path / "project", tmp_path / "cache", tmp_path / "cold"
    generate(120, root, seed=seed)
    first = _build(root, cache)
    assert first.status == "written", first.diagnostics
    rng = random.Random(seed)
    reused = lowered = 0
    for step in range(12):
        kinds = [_mutate(root, rng, step) for _ in range(rng.randint(1, 3))]
        incremental = _build(root, cache)
        shutil.rmtree(cold, ignore_errors=True)
        shutil.copytree(root / "src", cold / "src")
        reference = _build(cold, None)
        assert incremental.status == reference.status, kinds
        assert incremental.diagnostics == reference.diagnostics, kinds
        if reference.status == "written":
            assert _manifest(root) == _manifest(cold), f"step {step}: {kinds}"
            assert _sources(root) == _sources(cold), f"step {step}: {kinds}"
            assert incremental.result is not None
            wiring = incremental.result.unit.wiring
            assert wiring is not None
            reused += wiring.needs - wiring.resolved
            lowered += len(wiring.reused.get("lower", ()))
    assert reused > 0 and lowered > 0  # the memo did spare work (wiring and lowering)


def test_a_damaged_memo_means_a_whole_wiring(tmp_path: Path) -> None:
    root, cache = tmp_path / "project", tmp_path / "cache"
    generate(30, root)
    _build(root, cache)
    memo = project_dir(cache, root) / WIRING_FILE
    data = orjson.loads(memo.read_bytes())
    first = next(iter(data["wiring"]["nodes"].values()))
    first["k"] = [10**9]  # a key id beyond the table
    memo.write_bytes(orjson.dumps(data))
    changed = sorted((root / "src").glob("*.prose.md"))[3]
    changed.write_text(changed.read_text() + "\nMore.\n")
    outcome = _build(root, cache)
    assert outcome.status == "written"
    assert outcome.result is not None and outcome.result.unit.wiring is not None
    assert outcome.result.unit.wiring.resolved == outcome.result.unit.wiring.needs
    incremental = _manifest(root)
    shutil.rmtree(root / "dist")
    _build(root, None)
    assert _manifest(root) == incremental


def test_cli_rebuild_says_how_much_it_rewired(tmp_path: Path, run_prosec: Runner) -> None:
    root = tmp_path / "project"
    generate(40, root)
    env_cache = {"PROSEC_CACHE_DIR": str(tmp_path / "cache")}
    cold = run_prosec("build", root, "--offline-tools", env=env_cache)
    assert cold.returncode == 0, cold.stderr
    changed = sorted((root / "src").glob("*.prose.md"))[5]
    changed.write_text(changed.read_text() + "\nOne more sentence.\n")
    again = run_prosec("build", root, "--offline-tools", env=env_cache)
    assert again.returncode == 0, again.stderr
    assert re.search(r"re-wired \d+ of \d+ needs", again.stderr), again.stderr
    incremental = _manifest(root)
    shutil.rmtree(root / "dist")
    fresh = run_prosec("build", root, "--offline-tools", "--no-cache", env=env_cache)
    assert fresh.returncode == 0 and _manifest(root) == incremental


def test_kept_lint_findings_follow_the_call_targets_of_other_files(tmp_path: Path) -> None:
    """A file's contract-rule findings are kept by the build cache; one whose ```prose
    calls a target another file adds, renames or removes is checked again."""
    root, cache = tmp_path / "project", tmp_path / "cache"
    generate(20, root)
    caller = next(p for p in sorted((root / "src").iterdir()) if "```prose" in p.read_text())
    caller.write_text(caller.read_text().replace("call researcher", "call helper-x"))
    shown = f"src/{caller.name}"

    def codes() -> list[str]:
        outcome = _build(root, cache)
        reference = _build_cold(root, tmp_path / "cold")
        assert outcome.diagnostics == reference.diagnostics
        return [d.code for d in outcome.diagnostics if d.span.path == shown]

    assert "prosescript_unknown_call" in codes()
    helper = root / "src" / "helper-x.prose.md"
    helper.write_text(
        caller.read_text().replace(_NAME.search(caller.read_text())[0], "name: helper-x")
    )
    assert "prosescript_unknown_call" not in codes()
    helper.rename(root / "src" / "helper-y.prose.md")  # the file's stem was a target too
    helper = root / "src" / "helper-y.prose.md"
    helper.write_text(helper.read_text().replace("name: helper-x", "name: helper-y"))
    assert "prosescript_unknown_call" in codes()


def _build_cold(root: Path, cold: Path) -> BuildOutcome:
    shutil.rmtree(cold, ignore_errors=True)
    shutil.copytree(root / "src", cold / "src")
    return _build(cold, None)
