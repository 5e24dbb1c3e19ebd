"""`prosec test` end to end: real `prosec` processes, real subprocess renders (the
newsroom's renders/desk.py), a fake judge written here, JUnit parsed by junitparser."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import textwrap
from pathlib import Path

import junitparser
import pytest
from prosec.runtime.schemas import validate

from ...conftest import CORPUS, Runner

pytest_plugins = ["pytester"]

JUDGE = """\
import json, pathlib, sys
prompt = sys.stdin.read()
calls = pathlib.Path("judge-calls.txt")
calls.write_text(calls.read_text() + "call\\n" if calls.exists() else "call\\n")
must_not = "must NOT hold" in prompt
mentions = "Bridge reopens" in prompt
holds = mentions if not must_not else "fabricated" not in prompt
print(json.dumps({"verdict": "pass" if holds else "fail",
                  "evidence": "the decisions name Bridge reopens" if mentions else "no lead"}))
"""


@pytest.fixture
def newsroom(tmp_path: Path) -> Path:
    root = tmp_path / "newsroom"
    shutil.copytree(
        CORPUS / "newsroom", root, ignore=shutil.ignore_patterns("dist", "runs", "state")
    )
    return root


def write_test(root: Path, name: str, body: str) -> Path:
    path = root / f"{name}.test.prose.md"
    path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return path


def only_run(out: Path, test: str) -> Path:
    runs = sorted((out / test / "runs").iterdir())
    return runs[-1]


def test_a_passing_test_reports_and_logs_as_upstream(newsroom: Path, run_prosec: Runner) -> None:
    out = newsroom.parent / "out"
    result = run_prosec("test", "breaking-desk.test.prose.md", "--out", out, cwd=newsroom)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Results: 1 passed, 0 failed, 0 errors\n")
    assert "test-breaking-desk .................. PASS (8/8)" in result.stdout
    run = only_run(out, "test-breaking-desk")
    report = (run / "report.md").read_text(encoding="utf-8")
    assert report.startswith(
        "# Test Report: test-breaking-desk\n\nSubject: breaking-desk\nResult: PASS\n\n## Assertions\n"
    )
    assert "## Negative Assertions\n\n✓ `__error.md` exists\n" in report
    log = (run / "vm.log.md").read_text(encoding="utf-8").splitlines()
    evals = [line for line in log if "→ [eval] " in line]
    assert len(evals) == 8 and all(line.endswith(" ✓") for line in evals)
    assert log[-1] == "---test PASS (8/8 assertions)"
    recorded = json.loads((run / "test-result.json").read_text(encoding="utf-8"))
    assert recorded["status"] == "pass" and recorded["passed"] == recorded["total"] == 8
    assert validate(recorded, "test-result.schema.json") == []
    # the test ran in its own root: the project's state/ and runs/ were never made
    assert not (newsroom / "state").exists() and not (newsroom / "runs").exists()
    # two runs (the fixtures, then ### Changes), each with its own run id
    assert len(list((out / "test-breaking-desk" / "runs").iterdir())) == 2


def test_a_failing_assertion_names_its_evidence(newsroom: Path, run_prosec: Runner) -> None:
    out = newsroom.parent / "out"
    result = run_prosec("test", ".", "--out", out, cwd=newsroom)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.startswith("Results: 2 passed, 1 failed, 0 errors\n")
    assert (
        '  ✗ `stories`: lists "Allotment open day" before "Bridge reopens" — '
        '"Allotment open day" is item 2 and "Bridge reopens" item 1\n'
    ) in result.stdout
    report = (only_run(out, "test-front-page-order") / "report.md").read_text(encoding="utf-8")
    assert "Result: FAIL" in report
    assert (
        '✗ `stories`: lists "Allotment open day" before "Bridge reopens"\n'
        '  Observed: "Allotment open day" is item 2 and "Bridge reopens" item 1\n'
    ) in report
    log = (only_run(out, "test-front-page-order") / "vm.log.md").read_text(encoding="utf-8")
    assert log.rstrip().endswith("---test FAIL (3/4 assertions)")


def test_a_negative_assertion_fails_when_its_text_holds(newsroom: Path, run_prosec: Runner) -> None:
    write_test(
        newsroom,
        "lead-never",
        """
        ---
        name: test-lead-never
        kind: test
        subject: breaking-desk
        ---

        ### Fixtures

        - `wire-feed.breaking`: ["Bridge reopens"]

        ### Expects

        - `decisions`: has 1 item

        ### Expects Not

        - `decisions.0.action`: is "lead"
        - `decisions`: contains "Storm warning"
        """,
    )
    out = newsroom.parent / "out"
    result = run_prosec("test", "lead-never.test.prose.md", "--out", out, cwd=newsroom)
    assert result.returncode == 1, result.stdout + result.stderr
    report = (only_run(out, "test-lead-never") / "report.md").read_text(encoding="utf-8")
    negative = report.split("## Negative Assertions\n", 1)[1]
    assert '✗ `decisions.0.action`: is "lead"\n  Observed: `decisions.0.action` is "lead"\n' in (
        negative
    )
    assert '✓ `decisions`: contains "Storm warning"' in negative


def test_a_judged_assertion_is_recorded_and_replayed(newsroom: Path, run_prosec: Runner) -> None:
    (newsroom / "judge.py").write_text(JUDGE, encoding="utf-8")
    toml = newsroom / "prose.toml"
    toml.write_text(
        toml.read_text()
        + '\n[test.judge]\ncommand = "python3 judge.py"\nenv = { JUDGE_TOKEN = "tok-5ecr3t-77" }\n'
    )
    write_test(
        newsroom,
        "judged",
        """
        ---
        name: test-judged
        kind: test
        subject: breaking-desk
        ---

        ### Fixtures

        - `wire-feed.breaking`: ["Bridge reopens"]

        ### Expects

        - `decisions`: reads like a sensible editorial call on the bridge story

        ### Expects Not

        - `decisions`: invents a story the wire never carried
        """,
    )
    out = newsroom.parent / "out"
    first = run_prosec("test", "judged.test.prose.md", "--out", out, cwd=newsroom)
    assert first.returncode == 0, first.stdout + first.stderr
    run = only_run(out, "test-judged")
    recorded = json.loads((run / "judgements.json").read_text(encoding="utf-8"))["judgements"]
    assert [(r["verdict"], r["negated"]) for r in recorded] == [("pass", False), ("pass", True)]
    assert recorded[0]["evidence"] == "the decisions name Bridge reopens"
    assert recorded[0]["truth"] == {"decisions": [{"action": "lead", "story": "Bridge reopens"}]}
    assert "✓ `decisions`: reads like a sensible editorial call on the bridge story (judge)" in (
        (run / "report.md").read_text(encoding="utf-8")
    )
    calls = (newsroom / "judge-calls.txt").read_text().count("call")
    assert calls == 2
    # the judge is gone: a replay takes the recorded verdicts and calls nothing
    (newsroom / "judge.py").write_text("import sys; sys.exit(7)\n", encoding="utf-8")
    replay = run_prosec(
        "test", "judged.test.prose.md", "--out", out, "--judge-replay", cwd=newsroom
    )
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert (newsroom / "judge-calls.txt").read_text().count("call") == calls
    # the judge's secret is in its environment only: never printed, logged or recorded
    for path in [*out.rglob("*"), *newsroom.rglob("*")]:
        if path.is_file() and path.name != "prose.toml":
            assert b"tok-5ecr3t-77" not in path.read_bytes(), path
    assert "tok-5ecr3t-77" not in first.stdout + first.stderr + replay.stdout + replay.stderr
    # without the replay, the broken judge makes the test an error, not a pass
    broken = run_prosec("test", "judged.test.prose.md", "--out", out, cwd=newsroom)
    assert broken.returncode == 1
    assert "ERROR" in broken.stdout and "the judge exited with 7" in broken.stdout


def test_selective_wake_is_asserted(newsroom: Path, run_prosec: Runner) -> None:
    """The desk subscribes to `breaking` only: a change to the features leaves it asleep
    (the corpus test), a change to the breaking items wakes it."""
    write_test(
        newsroom,
        "wakes",
        """
        ---
        name: test-wakes
        kind: test
        subject: breaking-desk
        ---

        ### Fixtures

        - `wire-feed.breaking`: ["Bridge reopens"]
        - `wire-feed.features`: ["Allotment open day"]

        ### Changes

        - `wire-feed.breaking`: ["Storm warning"]

        ### Expects

        - `breaking-desk`: stays asleep
        - `decisions.0.story`: is "Storm warning"
        """,
    )
    out = newsroom.parent / "out"
    result = run_prosec("test", "wakes.test.prose.md", "--out", out, cwd=newsroom)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "  ✗ `breaking-desk`: stays asleep — breaking-desk rendered in the last run" in (
        result.stdout
    )
    assert "FAIL (1/2)" in result.stdout


def test_a_fixture_missing_an_input_stops_before_anything_runs(
    newsroom: Path, run_prosec: Runner
) -> None:
    write_test(
        newsroom,
        "half",
        """
        ---
        name: test-half
        kind: test
        subject: editor-briefing
        ---

        ### Fixtures

        - `front-page.stories`: ["Bridge reopens"]

        ### Expects

        - `briefing.lead`: is "Bridge reopens"
        """,
    )
    out = newsroom.parent / "out"
    result = run_prosec("test", ".", "--out", out, cwd=newsroom)
    assert result.returncode == 2, result.stdout + result.stderr
    assert (
        "half.test.prose.md:7:1: error test_fixture_missing no fixture binds `audience`, a "
        "caller input of `editor-briefing` (tests never prompt)"
    ) in result.stderr
    assert "prosec: error: 1 error before any test ran: nothing was run" in result.stderr
    assert not out.exists()  # not even the tests whose fixtures are whole ran


def test_junit_output_is_read_by_junitparser(newsroom: Path, run_prosec: Runner) -> None:
    out, xml = newsroom.parent / "out", newsroom.parent / "report.xml"
    result = run_prosec("test", ".", "--out", out, "--format", "junit", "-o", xml, cwd=newsroom)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout == ""
    document = junitparser.JUnitXml.fromfile(str(xml))
    suites = list(document)
    assert [s.name for s in suites] == ["prosec test ."]
    cases = {case.name: case for case in suites[0]}
    assert sorted(cases) == ["test-breaking-desk", "test-editor-briefing", "test-front-page-order"]
    assert suites[0].tests == 3 and suites[0].failures == 1 and suites[0].errors == 0
    (failure,) = cases["test-front-page-order"].result
    assert isinstance(failure, junitparser.Failure)
    assert failure.message == "1 of 4 assertions failed"
    assert '"Allotment open day" is item 2' in (failure.text or "")
    assert cases["test-breaking-desk"].is_passed


def test_tests_in_parallel_give_the_same_results(newsroom: Path, run_prosec: Runner) -> None:
    one = run_prosec("test", ".", "--out", newsroom.parent / "one", cwd=newsroom)
    two = run_prosec("test", ".", "--out", newsroom.parent / "two", "--jobs", "3", cwd=newsroom)
    assert one.returncode == two.returncode == 1

    def masked(text: str) -> str:
        return re.sub(r"/(one|two)/(.*)/runs/[^/]+/", r"/OUT/\2/runs/RUN/", text)

    assert masked(one.stdout) == masked(two.stdout)


def test_junit_without_its_extra_says_what_to_install(
    newsroom: Path, run_prosec: Runner, tmp_path: Path
) -> None:
    shadow = tmp_path / "no-junit" / "junitparser"
    shadow.mkdir(parents=True)  # a package that cannot be imported, as if not installed
    (shadow / "__init__.py").write_text("raise ImportError('junitparser is not installed')\n")
    env = {**os.environ, "PYTHONPATH": str(shadow.parent)}
    result = run_prosec("test", ".", "--format", "junit", cwd=newsroom, env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr == (
        "prosec: error: --format junit needs the 'junit' extra: pip install 'prosec[junit]'\n"
    )


def test_json_output_lists_every_assertion(newsroom: Path, run_prosec: Runner) -> None:
    out = newsroom.parent / "out"
    result = run_prosec(
        "test", "front-page.test.prose.md", "--out", out, "--format", "json", cwd=newsroom
    )
    assert result.returncode == 1
    (only,) = json.loads(result.stdout)["results"]
    assert only["status"] == "fail" and (only["passed"], only["total"]) == (3, 4)
    assert [a["op"] for a in only["assertions"]] == ["count", "contains", "before", "contains"]


def test_explain_shows_each_lowering(newsroom: Path, run_prosec: Runner) -> None:
    result = run_prosec("explain", "breaking-desk.test.prose.md", cwd=newsroom)
    assert result.returncode == 0, result.stderr
    assert "  fixture node wire-feed publishes {" in result.stdout
    assert '    → equals: `decisions.0.action` == "lead"' in result.stdout
    assert "    → rendered: not (`breaking-desk` rendered in the last run)" in result.stdout


FAKE_AGENT = Path(__file__).parents[2] / "runtime" / "vm" / "fake_agent.py"


def test_a_function_subject_runs_in_the_vm(tmp_path: Path, run_prosec: Runner) -> None:
    """The fixtures are the function's parameters; it runs as `prosec run FILE` runs it
    (its call answered by a fake agent CLI), and the checks read what it returned."""
    root = tmp_path / "p"
    shutil.copytree(CORPUS / "recipe-scaler", root)
    (root / "table.json").write_text(json.dumps({"calls": {"serving-factor": {"factor": 2}}}))
    command = json.dumps([sys.executable, str(FAKE_AGENT), "table.json", "agent.log"])
    (root / "prose.toml").write_text(f'[render.default]\nkind = "agent"\ncommand = {command}\n')
    write_test(
        root,
        "factor",
        """
        ---
        name: test-factor
        kind: test
        subject: scale-recipe
        ---

        ### Fixtures

        - `recipe`: a loaf of 500 g flour, serving 8
        - `servings`: 16

        ### Expects

        - `scaled`: is 2

        ### Expects Not

        - `scaled`: is one of 1, 3
        - `__error.md` exists
        """,
    )
    out = tmp_path / "out"
    result = run_prosec("test", "factor.test.prose.md", "--out", out, cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "test-factor ......................... PASS (3/3)" in result.stdout
    assert (root / "agent.log").read_text().splitlines() == [
        "call serving-factor main/0 unspecified"
    ]  # the fake logs the model too
    run = only_run(out, "test-factor")
    assert json.loads((run / "vm" / "result.json").read_text()) == {"result": 2}
    assert (run / "vm.log.md").read_text().rstrip().endswith("---test PASS (3/3 assertions)")
    assert not (root / "runs").exists() and not (root / "state").exists()
    # a parameter no fixture binds is an error of the test, reported, never prompted
    (root / "factor.test.prose.md").write_text(
        (root / "factor.test.prose.md").read_text().replace("- `servings`: 16\n", "")
    )
    missing = run_prosec("test", "factor.test.prose.md", "--out", out, cwd=root)
    assert missing.returncode == 1
    assert "! `servings` is a parameter no fixture binds of `scale-recipe`" in missing.stdout


@pytest.mark.slow  # a pytest process of its own
def test_pytest_collects_one_item_per_contract(newsroom: Path, pytester: pytest.Pytester) -> None:
    for path in newsroom.iterdir():
        target = pytester.path / path.name
        if path.is_dir():
            shutil.copytree(path, target)
        else:
            shutil.copy(path, target)
    collected = pytester.runpytest_subprocess("--collect-only", "-q", "-p", "no:cacheprovider")
    assert "no tests collected" in collected.stdout.str()  # opt-in: nothing without it
    result = pytester.runpytest_subprocess("--prosec-tests", "-p", "no:cacheprovider", "-rf")
    result.assert_outcomes(passed=2, failed=1)
    text = result.stdout.str()
    assert "# Test Report: test-front-page-order" in text
    assert '  Observed: "Allotment open day" is item 2 and "Bridge reopens" item 1' in text
    pytester.makeini("[pytest]\nprosec_tests = true\n")
    by_ini = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "breaking")
    by_ini.assert_outcomes(passed=1, deselected=2)
