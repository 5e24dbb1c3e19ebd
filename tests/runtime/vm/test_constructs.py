"""Each construct end to end through the fake agent as a real agent render: the exact
seed 001 markers of vm.log.md and seed 003 in-context narration, and the result."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from .support import VmProject

IN_CONTEXT_HEAD = [
    "OpenProse Run Start",
    "   State mode: in-context (a single program run, nothing durable)",
]


def _narration(project: VmProject, *args: str) -> list[str]:
    result = project.prosec("run", project.entry, "--backend", "in-context", *args)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    return lines[: lines.index("---end") + 1]


CASES: list[tuple[str, str, dict[str, Any], list[str], list[str], list[str]]] = [
    (
        "vm-bindings",
        "packing-list",
        {},
        ["--place", "Dartmoor", "--nights", "2"],
        [
            "1→ [input] place ✓",
            "2→ [input] nights ✓",
            "3→ weather-outlook ✓",
            "4→ gear-for ✓",
            "---end",
        ],
        [
            "1→ [input] place ✓",
            "2→ [input] nights ✓",
            'call weather-outlook(place:"Dartmoor",season:"autumn") → forecast ✓',
            'call gear-for(forecast:"weather-outlook:outlook({\\"place\\": ...,nights:"2") → gear ✓',
            "---end",
        ],
    ),
    (
        "vm-parallel",
        "market-stalls",
        {},
        ["--basket", "apples"],
        [
            "1→ [input] basket ✓",
            "2→ ∥start fruit,bread,cheese",
            "2a→ fruit ✓",
            "2b→ bread ✓",
            "2c→ cheese ✓",
            "2→ ∥done",
            "3→ add-prices ✓",
            "---end",
        ],
        [
            "1→ [input] basket ✓",
            "∥ [fruit bread cheese]",
            '  call stall-price(stall:"fruit",basket:"apples") → fruit ✓',
            '  call stall-price(stall:"bread",basket:"apples") → bread ✓',
            '  call stall-price(stall:"cheese",basket:"apples") → cheese ✓',
            "∥ [fruit✓ bread→ cheese→]",
            "∥ [fruit✓ bread✓ cheese→]",
            "∥ [fruit✓ bread✓ cheese✓] done",
            'call add-prices(prices:["stall-price:price({\\"basket\\": \\"ap...) → total ✓',
            "---end",
        ],
    ),
    (
        "vm-loops",
        "bread-proofing",
        {"answers": {"the dough has doubled": [False, True]}},
        ["--loaves", '["rye", "spelt"]'],
        [
            "1→ [input] loaves ✓",
            "2→ fold-dough ✓",
            "3→ fold-dough ✓",
            "4→ shape-loaf ✓",
            "5→ shape-loaf ✓",
            "6→ check-rise ✓",
            "7→ check-rise ✓",
            "---end",
        ],
        [
            "1→ [input] loaves ✓",
            "loop:1/2",
            "  call fold-dough(fold:1) → step ✓",
            "loop:2/2",
            "  call fold-dough(fold:2) → step ✓",
            "loop:1/2",
            '  call shape-loaf(loaf:"rye",position:0) → shaped ✓',
            "loop:2/2",
            '  call shape-loaf(loaf:"spelt",position:1) → shaped ✓',
            "loop:1/3",
            "  call check-rise(check:1) → rise ✓",
            "loop:2/3",
            "  call check-rise(check:2) → rise ✓",
            "loop:2/3 exit(**the dough has doubled**)",
            "---end",
        ],
    ),
    (
        "vm-branches",
        "plant-care",
        {
            "answers": {
                "the leaves are pale": True,
                "how the owner likes to hear about it": "detailed",
            }
        },
        ["--plant", "fern"],
        ["1→ [input] plant ✓", "2→ light-plan ✓", "3→ long-note ✓", "---end"],
        [
            "1→ [input] plant ✓",
            'call light-plan(plant:"fern") → care ✓',
            'call long-note(care:"light-plan:plan({\\"plant\\": \\"fern\\"})",plant:"fern") → message ✓',
            "---end",
        ],
    ),
    (
        "vm-errors",
        "parcel-delivery",
        {"fail": ["courier-booking"]},
        ["--parcel", "books"],
        [
            "1→ [input] parcel ✓",
            "2→ courier-booking ✗ refused",
            "3→ post-office ✓",
            "4→ notify-sender ✓",
            "---end",
        ],
        [
            "1→ [input] parcel ✓",
            "try→",
            "  2→ ✗ refused",
            "catch→ refusal",
            '  call post-office(parcel:"books",reason:{"detail": "courier-booking wrote wor...) → receipt ✓',
            "finally→",
            '  call notify-sender(parcel:"books") → result ✓',
            "---end",
        ],
    ),
    (
        "vm-sessions",
        "book-club",
        {},
        ["--book", "Emma", "--questions", "why Knightley"],
        [
            "1→ [input] book ✓",
            "2→ [input] questions ✓",
            "3→ reading-time ✓",
            "4→ opening ✓",
            "5→ followup ✓",
            "6→ session ✓",
            "---end",
        ],
        [
            "1→ [input] book ✓",
            "2→ [input] questions ✓",
            'call reading-time(book:"Emma") → weeks ✓',
            "3→ opening ✓",
            "4→ followup ✓",
            "5→ ✓",
            "---end",
        ],
    ),
    (
        "vm-blocks",
        "pottery-firing",
        {},
        ["--pots", '["jug", "bowl"]'],
        ["1→ [input] pots ✓", "2→ glaze-pot ✓", "3→ glaze-pot ✓", "4→ fire-kiln ✓", "---end"],
        [
            "1→ [input] pots ✓",
            '#1 glaze("jug",2)',
            '  call glaze-pot(pot:"jug",coats:2) → glazed ✓',
            "#1 done",
            '#2 glaze("bowl",1)',
            '  call glaze-pot(pot:"bowl",coats:1) → glazed ✓',
            "#2 done",
            'call fire-kiln(pots:["glaze-pot:pot({\\"coats\\": 2, \\"pot\\...) → firing ✓',
            "---end",
        ],
    ),
]


@pytest.mark.parametrize(
    ("program", "entry", "table", "args", "vm_log", "in_context"),
    CASES,
    ids=[case[0] for case in CASES],
)
def test_markers_of_each_construct(
    tmp_path: Path,
    program: str,
    entry: str,
    table: dict[str, Any],
    args: list[str],
    vm_log: list[str],
    in_context: list[str],
) -> None:
    project = VmProject.create(tmp_path, program, entry, table)
    outcome = project.run(*args)
    assert outcome["ok"], outcome
    assert project.markers(outcome["run_id"]) == vm_log
    assert _narration(project, *args) == IN_CONTEXT_HEAD + in_context


def test_each_call_gets_its_arguments_and_the_result_is_what_the_script_returns(
    tmp_path: Path,
) -> None:
    project = VmProject.create(tmp_path, "vm-loops", "bread-proofing")
    project.table({"answers": {"the dough has doubled": [False, False, True]}})
    outcome = project.run("--loaves", '["rye"]')
    assert outcome["result"] == [
        'fold-dough:note({"fold": 1})',
        'fold-dough:note({"fold": 2})',
        'shape-loaf:note({"loaf": "rye", "position": 0})',
        'check-rise:note({"check": 1})',
        'check-rise:note({"check": 2})',
        'check-rise:note({"check": 3})',
    ]
    questions = [
        " ".join(line.split(" ")[:3]) for line in project.steps() if line.startswith("question")
    ]
    assert questions == [
        "question bread-proofing main/3@0?",
        "question bread-proofing main/3@1?",
        "question bread-proofing main/3@2?",
    ]
    journal = project.run_dir(outcome["run_id"]) / "vm/journal.jsonl"
    answers = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [e["value"] for e in answers if e["kind"] == "answer"] == [
        {"ok": False},
        {"ok": False},
        {"ok": True},
    ]


def test_the_else_branch_and_the_first_choice(tmp_path: Path) -> None:
    project = VmProject.create(tmp_path, "vm-branches", "plant-care")
    project.table({"answers": {"how the owner likes to hear about it": "short"}})
    outcome = project.run("--plant", "cactus")
    assert outcome["result"] == {
        "care": "leave it be",
        "message": 'short-note:note({"care": "leave it be"})',
    }


def test_a_throw_fails_the_run_with_its_message(tmp_path: Path) -> None:
    project = VmProject.create(tmp_path, "vm-errors", "parcel-delivery")
    project.table({"answers": {"the parcel could not be sent at all": True}})
    outcome = project.run("--parcel", "a piano", expect=1)
    assert not outcome["ok"] and outcome["error"] == "no way to send the parcel"
    assert project.markers(outcome["run_id"])[-1] == "---error"
    log = (project.run_dir(outcome["run_id"]) / "vm.log.md").read_text()
    assert log.rstrip("\n").endswith("no way to send the parcel")


def _spans(project: VmProject, run_id: str) -> list[tuple[float, float]]:
    folder = project.run_dir(run_id) / "workspace/stall-price"
    spans = [json.loads(p.read_text()) for p in folder.glob("*/__span.json")]
    return sorted((span["start"], span["end"]) for span in spans)


def test_parallel_branches_are_bounded_by_jobs(tmp_path: Path) -> None:
    project = VmProject.create(tmp_path, "vm-parallel", "market-stalls", {"sleep": 0.6})
    one = project.run("--basket", "pears", "--jobs", "1")
    spans = _spans(project, one["run_id"])
    assert len(spans) == 3
    assert all(later[0] >= earlier[1] for earlier, later in itertools.pairwise(spans))
    three = project.run("--basket", "pears", "--jobs", "3")
    spans = _spans(project, three["run_id"])
    assert max(start for start, _ in spans) < min(end for _, end in spans)  # all at once
    assert one["result"] == three["result"]


def test_a_persistent_agent_gets_its_memory_and_model_in_each_session(tmp_path: Path) -> None:
    project = VmProject.create(tmp_path, "vm-sessions", "book-club")
    outcome = project.run("--book", "Emma", "--questions", "why Knightley")
    agents = project.run_dir(outcome["run_id"]) / "agents" / "host"
    assert sorted(p.name for p in agents.iterdir()) == ["host-001.md", "host-002.md", "memory.md"]
    assert (agents / "memory.md").read_text() == "# Agent Memory: host\n"
    first = (agents / "host-001.md").read_text()
    assert first.startswith("# Segment 001\n") and f"run: {outcome['run_id']}" in first
    workspace = project.run_dir(outcome["run_id"]) / "workspace" / "host"
    prompts = sorted(workspace.glob("*/__prompt.md"))
    assert len(prompts) == 2
    assert all(f"Your memory is at: {agents / 'memory.md'}" in p.read_text() for p in prompts)
    assert all("Open the discussion of Emma" in p.read_text() for p in prompts[:1])
    models = {line.split(" ")[1]: line.split(" ")[3] for line in project.steps()}
    assert models == {"reading-time": "unspecified", "host": "sonnet", "book-club": "unspecified"}
