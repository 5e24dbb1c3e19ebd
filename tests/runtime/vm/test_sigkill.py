"""SIGKILL a running program at random moments, then `prosec resume` it: the same result,
bindings and inputs as an uninterrupted run, and no completed step done twice."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from ..project import PROSEC
from .support import VmProject

TRIALS = 32
PROGRAMS = [
    (
        "vm-loops",
        "bread-proofing",
        {"answers": {"the dough has doubled": [False, True]}, "sleep": 0.05},
        ["--loaves", '["rye", "spelt"]'],
    ),
    ("vm-parallel", "market-stalls", {"sleep": 0.1}, ["--basket", "figs"]),
]


def _started(project: VmProject, process: subprocess.Popen[bytes]) -> float:
    """Wait until the run folder exists (the file is compiled); the time it took."""
    began = time.monotonic()
    while process.poll() is None:
        runs = project.root / "runs"
        if runs.is_dir() and any(p.name[:1].isdigit() for p in runs.iterdir()):
            break
        time.sleep(0.005)
    return time.monotonic() - began


def _kill_at(project: VmProject, args: list[str], delay: float) -> None:
    """SIGKILL `prosec run` `delay` seconds after its run folder appeared."""
    process = subprocess.Popen(
        [str(PROSEC), "run", project.entry, *args],
        cwd=project.root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _started(project, process)
    time.sleep(delay)
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=60)


def _files(run: Path) -> dict[str, bytes]:
    names = ["vm/result.json", "vm/bindings.json"]
    names += [f"world-model/caller/{p.name}" for p in (run / "world-model/caller").iterdir()]
    return {name: (run / name).read_bytes() for name in names}


@pytest.mark.slow
def test_resume_after_sigkill_at_random_points(tmp_path: Path) -> None:
    rng = random.Random(11)
    references = {}
    for program, entry, table, args in PROGRAMS:
        reference = VmProject.create(tmp_path / "ref", program, entry, table)
        process = subprocess.Popen([str(PROSEC), "run", reference.entry, *args], cwd=reference.root)
        _started(reference, process)
        started = time.monotonic()
        assert process.wait(timeout=120) == 0
        duration = time.monotonic() - started
        run_id = sorted(p.name for p in (reference.root / "runs").iterdir())[-1]
        references[program] = (
            _files(reference.run_dir(run_id)),
            reference.markers(run_id),
            sorted(line.split(" ")[2] for line in reference.steps()),
            duration,
        )
    interrupted = 0
    for trial in range(TRIALS):
        program, entry, table, args = PROGRAMS[trial % len(PROGRAMS)]
        files, markers, steps, duration = references[program]
        project = VmProject.create(tmp_path / f"t{trial}", program, entry, table)
        _kill_at(project, args, rng.uniform(0, duration))
        runs = sorted((project.root / "runs").glob("*")) if (project.root / "runs").exists() else []
        if not runs:  # killed before the run existed: nothing to resume
            continue
        run = runs[-1]
        journal = run / "vm/journal.jsonl"
        done = set()
        if journal.exists():
            for line in journal.read_bytes().splitlines():
                with contextlib.suppress(ValueError):  # the torn tail a kill can leave
                    done.add(json.loads(line)["key"])
        before = len(project.steps())
        resumed = project.prosec("resume", run.name, "--json")
        assert resumed.returncode == 0, (trial, resumed.stdout, resumed.stderr)
        if "already finished" not in resumed.stdout:
            interrupted += 1
        redone = {line.split(" ")[2] for line in project.steps()[before:]}
        assert not redone & done, (trial, redone & done)
        assert _files(run) == files, trial
        assert project.markers(run.name) == markers, trial
        # every step ran, and a step ran twice only if the kill cut it short
        assert set(steps) <= {line.split(" ")[2] for line in project.steps()}
    assert interrupted >= TRIALS // 2
