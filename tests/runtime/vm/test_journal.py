"""The journal: durable steps, `prosec resume` after a SIGKILL, `--replay` byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prosec.runtime.vm.journal import Journal, JournalError

from .support import VmProject

LOOPS = {"answers": {"the dough has doubled": [False, False, True]}}


def _journal(project: VmProject, run_id: str) -> list[dict[str, object]]:
    path = project.run_dir(run_id) / "vm/journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _run_id(project: VmProject) -> str:
    return sorted(p.name for p in (project.root / "runs").iterdir())[-1]


def test_every_completed_step_is_one_chained_line(tmp_path: Path) -> None:
    project = VmProject.create(tmp_path, "vm-loops", "bread-proofing", LOOPS)
    outcome = project.run("--loaves", '["rye"]')
    entries = _journal(project, outcome["run_id"])
    assert [e["seq"] for e in entries] == list(range(1, len(entries) + 1))
    assert entries[0]["prev"] is None
    assert [e["kind"] for e in entries].count("call") == 6
    assert [e["kind"] for e in entries].count("answer") == 3
    assert entries[0] == {
        "key": "input:loaves",
        "kind": "bind",
        "prev": None,
        "seq": 1,
        "value": '["rye"]',
    }
    result = json.loads((project.run_dir(outcome["run_id"]) / "vm/result.json").read_text())
    assert result == {"result": outcome["result"]}


def test_a_tampered_journal_is_refused_on_load(tmp_path: Path) -> None:
    project = VmProject.create(tmp_path, "vm-bindings", "packing-list")
    outcome = project.run("--place", "Skye", "--nights", "1")
    path = project.run_dir(outcome["run_id"]) / "vm/journal.jsonl"
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace("1", "2")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(JournalError, match=r"journal.jsonl:[23]"):
        Journal.open(path)
    path.write_text("\n".join([lines[0], lines[2]]) + "\n")
    with pytest.raises(JournalError, match=r"expected step 2|chain"):
        Journal.open(path)


def test_a_torn_last_line_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = Journal.open(path)
    journal.record("a", "call", {"ok": 1})
    with path.open("ab") as handle:
        handle.write(b'{"key": "b", "kind"')
    again = Journal.open(path)
    assert [e["key"] for e in again.entries] == ["a"]
    again.record("b", "call", {"ok": 2})
    assert [e["key"] for e in Journal.open(path).entries] == ["a", "b"]


@pytest.mark.parametrize("after", [2, 4, 6, 8])
def test_resume_after_a_sigkill_finishes_without_redoing_a_step(tmp_path: Path, after: int) -> None:
    reference = VmProject.create(tmp_path / "ref", "vm-loops", "bread-proofing", LOOPS)
    whole = reference.run("--loaves", '["rye", "spelt"]')
    project = VmProject.create(tmp_path / "cut", "vm-loops", "bread-proofing", LOOPS)
    crashed = project.prosec(
        "run",
        project.entry,
        "--loaves",
        '["rye", "spelt"]',
        env={"PROSEC_VM_CRASH_AFTER": str(after)},
    )
    assert crashed.returncode == -9, crashed.stderr
    run_id = _run_id(project)
    done_before = {str(e["key"]) for e in _journal(project, run_id)}
    assert len(done_before) == after
    steps_before = len(project.steps())
    resumed = project.prosec("resume", run_id, "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["result"] == whole["result"]
    redone = [line.split(" ")[2] for line in project.steps()[steps_before:]]
    assert not set(redone) & done_before
    assert len(project.steps()) == len(reference.steps())
    for name in ("result.json", "bindings.json"):
        assert (project.run_dir(run_id) / "vm" / name).read_bytes() == (
            reference.run_dir(whole["run_id"]) / "vm" / name
        ).read_bytes()
    assert project.markers(run_id) == reference.markers(whole["run_id"])
    again = project.prosec("resume", run_id)
    assert again.returncode == 0 and "already finished" in again.stdout


@pytest.mark.parametrize(
    ("program", "entry", "table", "args"),
    [
        ("vm-loops", "bread-proofing", LOOPS, ["--loaves", '["rye"]']),
        ("vm-parallel", "market-stalls", {}, ["--basket", "plums"]),
        ("vm-errors", "parcel-delivery", {"fail": ["courier-booking"]}, ["--parcel", "a lamp"]),
        (
            "vm-branches",
            "plant-care",
            {"answers": {"the soil is dry": True, "how the owner likes to hear about it": "short"}},
            ["--plant", "basil"],
        ),
        ("vm-sessions", "book-club", {}, ["--book", "Persuasion", "--questions", "Anne"]),
        ("vm-blocks", "pottery-firing", {}, ["--pots", '["vase", "cup"]']),
    ],
    ids=lambda value: value if isinstance(value, str) and value.startswith("vm-") else "",
)
def test_replay_reproduces_a_run_byte_for_byte(
    tmp_path: Path, program: str, entry: str, table: dict[str, object], args: list[str]
) -> None:
    project = VmProject.create(tmp_path, program, entry, table)
    first = project.run(*args)
    steps = project.steps()
    project.table({"fail": ["everything"], "answers": {}})  # a replay asks no render
    second = project.run(*args, "--replay", first["run_id"])
    assert project.steps() == steps
    assert second["result"] == first["result"]
    one, two = project.run_dir(first["run_id"]), project.run_dir(second["run_id"])
    for name in ("vm/result.json", "vm/bindings.json", "world-model/caller"):
        if (one / name).is_dir():
            for item in (one / name).iterdir():
                assert item.read_bytes() == (two / name / item.name).read_bytes(), item
        else:
            assert (one / name).read_bytes() == (two / name).read_bytes(), name
    # the same lines in the same order, parallel branches included (a live run journals
    # them as they complete; the replay writes them in the recorded order)
    assert (one / "vm/journal.jsonl").read_bytes() == (two / "vm/journal.jsonl").read_bytes()
    assert project.markers(first["run_id"]) == project.markers(second["run_id"])
    # vm.log.md names its run in the header and ends with a timestamp: all else is equal
    assert _log_without_run(one, first["run_id"]) == _log_without_run(two, second["run_id"])


def _log_without_run(run: Path, run_id: str) -> bytes:
    text = (run / "vm.log.md").read_bytes().replace(run_id.encode(), b"RUN")
    body, end = text.rstrip(b"\n").rsplit(b"\n", 1)
    assert end.startswith((b"---end ", b"---error ")), end
    words = end.split(b" ", 2)
    return body + b"\n" + b" ".join([words[0], b"TS", *words[2:]]) + b"\n"


def test_a_replay_journal_writes_steps_in_the_recorded_order(tmp_path: Path) -> None:
    original = Journal.open(tmp_path / "one.jsonl")
    for key in ("input:a", "main/1a", "main/1b", "main/1c", "main/2"):
        original.record(key, "call", {"ok": key})
    replay = Journal.open(tmp_path / "two.jsonl")
    replay.follow(original.keys())
    written: list[int] = []
    replay.on_record = written.append
    replay.record("input:a", "call", {"ok": "input:a"})
    replay.record("main/1c", "call", {"ok": "main/1c"})  # the branches complete backwards
    assert replay.get("main/1c") is not None and written == [1]  # held, but known
    replay.record("main/1b", "call", {"ok": "main/1b"})
    replay.record("main/1a", "call", {"ok": "main/1a"})
    assert written == [1, 2, 3, 4]
    replay.record("main/2", "call", {"ok": "main/2"})
    assert (tmp_path / "two.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    Journal.open(tmp_path / "two.jsonl")  # and it verifies
    late = Journal.open(tmp_path / "three.jsonl")
    late.follow(original.keys())
    late.record("main/2", "call", {"ok": "main/2"})
    assert not (tmp_path / "three.jsonl").exists()
    late.flush()  # a replay that stops early still writes what it holds
    assert [e["key"] for e in Journal.open(tmp_path / "three.jsonl").entries] == ["main/2"]


def test_resume_refuses_a_damaged_journal_naming_its_line(tmp_path: Path) -> None:
    project = VmProject.create(tmp_path, "vm-bindings", "packing-list")
    crashed = project.prosec(
        "run", project.entry, "--place", "Fife", "--nights", "3", env={"PROSEC_VM_CRASH_AFTER": "3"}
    )
    assert crashed.returncode == -9
    run_id = _run_id(project)
    path = project.run_dir(run_id) / "vm/journal.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], lines[2]]) + "\n")
    resumed = project.prosec("resume", run_id)
    assert resumed.returncode == 2 and "Traceback" not in resumed.stderr
    assert f"{path}:2" in resumed.stderr
