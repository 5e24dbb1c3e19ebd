"""`prosec run FILE`: a function with inputs, every input form, the refusals."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from ...conftest import REPO
from ..project import PROSEC
from .support import VmProject


def _tea(tmp_path: Path) -> Path:
    root = tmp_path / "tea-timer"
    shutil.copytree(REPO / "corpus" / "tea-timer", root)
    return root


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PROSEC), "run", *args], cwd=root, capture_output=True, text=True, timeout=120
    )


def test_a_lone_function_runs_with_its_inputs_and_prints_its_returns(tmp_path: Path) -> None:
    root = _tea(tmp_path)
    result = _run(root, "src/tea-timer.prose.md", "--tea", "green", "--strength", "strong")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "minutes": 3,
        "advice": "Use water just off the boil, around 80 °C.",
    }
    run = next((root / "runs").iterdir())
    log = (run / "vm.log.md").read_text().splitlines()
    assert log[0] == f"# run:{run.name} tea-timer"
    assert log[1] == "root: src/tea-timer.prose.md"
    assert log[3:6] == ["1→ [input] tea ✓", "2→ [input] strength ✓", "3→ tea-timer ✓"]
    assert log[6].startswith("---end ")
    assert (run / "world-model/caller/tea.md").read_text() == (
        "# tea\n\nbinding: input\nsource: caller\n\n---\n\ngreen\n"
    )
    assert (run / "root.prose.md").read_bytes() == (root / "src/tea-timer.prose.md").read_bytes()
    assert not (root / "dist").exists()  # compiled in memory: no build, no activate


def test_every_input_form_binds_the_same_inputs(tmp_path: Path) -> None:
    root = _tea(tmp_path)
    forms = [
        ["--input", "tea=black", "--input", "strength=mild"],
        ["--tea", "black", "--strength", "mild"],
        ["--tea=black", "--strength=mild"],
        ["--", "tea:", "black", "strength:", "mild"],
        ["--", "tea: black", "strength: mild"],
    ]
    for form in forms:
        result = _run(root, "src/tea-timer.prose.md", *form)
        assert result.returncode == 0, (form, result.stderr)
        assert json.loads(result.stdout)["minutes"] == 3, form


def test_a_missing_input_lists_every_missing_name_and_its_description(tmp_path: Path) -> None:
    root = _tea(tmp_path)
    result = _run(root, "src/tea-timer.prose.md")
    assert result.returncode == 2
    assert "missing required inputs" in result.stderr
    assert "  tea: the kind of tea in the pot (green, black, oolong or herbal)" in result.stderr
    assert "  strength: how strong the cup should be: mild, medium or strong" in result.stderr
    assert not (root / "runs").exists()


def test_an_unknown_input_is_a_usage_error(tmp_path: Path) -> None:
    root = _tea(tmp_path)
    result = _run(
        root, "src/tea-timer.prose.md", "--tea", "green", "--strength", "x", "--milk", "y"
    )
    assert result.returncode == 2
    assert "unknown input 'milk'" in result.stderr and "tea, strength" in result.stderr


def test_gateways_and_patterns_are_refused_and_a_test_goes_to_prosec_test(tmp_path: Path) -> None:
    shutil.copytree(REPO / "corpus" / "prosescript", tmp_path / "p")
    gateway = _run(tmp_path / "p", "src/reading-inbox.prose.md")
    assert gateway.returncode == 2 and "is a gateway" in gateway.stderr
    assert "prosec trigger reading-inbox" in gateway.stderr
    pattern = _run(tmp_path / "p", "src/digest-review.prose.md")
    assert pattern.returncode == 2 and "is a pattern" in pattern.stderr
    shutil.copytree(REPO / "corpus" / "recipe-scaler", tmp_path / "r")
    routed = _run(tmp_path / "r", "src/scale-recipe.test.prose.md")
    assert "`doubles-a-loaf` is a test; running it with prosec test" in routed.stderr
    direct = subprocess.run(
        [str(PROSEC), "test", "src/scale-recipe.test.prose.md"],
        cwd=tmp_path / "r",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert routed.returncode == direct.returncode
    # the same report but for where each run's report.md is (a temporary folder, a run id)
    where = re.compile(r"report: \S+/report\.md")
    assert where.sub("report: …", routed.stdout) == where.sub("report: …", direct.stdout)


def test_a_file_that_does_not_compile_exits_1_with_its_diagnostics(tmp_path: Path) -> None:
    bad = tmp_path / "bad.prose.md"
    bad.write_text("---\nname: bad\nkind: function\n---\n\n# Bad\n\n```prose\nlet = 1\n```\n")
    result = _run(tmp_path, "bad.prose.md")
    assert result.returncode == 1
    assert "bad.prose.md:" in result.stdout and "prosescript_syntax" in result.stdout
    assert "does not compile" in result.stderr


def test_a_function_script_calls_its_sibling_functions(tmp_path: Path) -> None:
    project = VmProject.create(tmp_path, "vm-bindings", "packing-list")
    outcome = project.run("--place", "Dartmoor", "--nights", "2")
    assert outcome["ok"]
    outlook = 'weather-outlook:outlook({"place": "Dartmoor", "season": "autumn"})'
    assert outcome["result"] == {
        "forecast": outlook,
        "list": "gear-for:items("
        + json.dumps({"forecast": outlook, "nights": "2"}, sort_keys=True)
        + ")",
    }
    assert project.markers(outcome["run_id"]) == [
        "1→ [input] place ✓",
        "2→ [input] nights ✓",
        "3→ weather-outlook ✓",
        "4→ gear-for ✓",
        "---end",
    ]


def test_a_responsibility_file_is_mounted_and_reconciled_with_root_naming_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "newsroom"
    shutil.copytree(REPO / "corpus" / "newsroom", root)
    result = _run(root, "src/front-page.prose.md", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert len(summary["rendered"]) == 5
    log = (root / "runs" / summary["run_id"] / "vm.log.md").read_text().splitlines()
    assert log[:2] == [f"# run:{summary['run_id']} front-page", "root: src/front-page.prose.md"]
    run = root / "runs" / summary["run_id"]
    assert (run / "root.prose.md").read_bytes() == (root / "src/front-page.prose.md").read_bytes()
    assert not (root / "dist").exists()
    again = _run(root, "src/front-page.prose.md", "--json")
    assert json.loads(again.stdout)["rendered"] == []  # the memo holds across file runs


def test_an_index_file_brings_only_its_folder(tmp_path: Path) -> None:
    root = tmp_path / "newsroom"
    shutil.copytree(REPO / "corpus" / "newsroom", root)
    desk = root / "src" / "desk"
    desk.mkdir()
    (root / "src/wire-feed.prose.md").rename(desk / "wire-feed.prose.md")
    (root / "src/breaking-desk.prose.md").rename(desk / "index.prose.md")
    result = _run(root, "src/desk/index.prose.md", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert sorted(summary["rendered"]) == ["breaking-desk", "wire-feed"]
    log = (root / "runs" / summary["run_id"] / "vm.log.md").read_text().splitlines()
    assert log[1] == "root: src/desk/index.prose.md"


def test_a_bad_program_fails_its_run_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/count.prose.md").write_text(
        "---\nname: count\nkind: function\n---\n\n# Count\n\n### Parameters\n\n"
        "- `times`: how often\n\n### Returns\n\n- `done`: done\n\n### Execution\n\n"
        "```prose\nlet done = []\nrepeat times:\n  append 1 to done\nreturn done\n```\n"
    )
    bad = _run(tmp_path, "src/count.prose.md", "--times", "many")
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "`repeat` needs a whole number, not 'many'" in bad.stderr
    good = _run(tmp_path, "src/count.prose.md", "--times", "3")
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout) == [1, 1, 1]
