"""Group commit (issue 14): the commits of a wave are made durable together behind one
journal; SIGKILL at every point inside a group, and the loss of everything a group
applied but had not synced yet, recover to the state of an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from prosec.runtime.backends import BackendError
from prosec.runtime.backends.fsjournal import JOURNAL, decode_journal, encode_journal
from prosec.runtime.canonical import content_address, encode_frame
from prosec.runtime.fsio import append_line
from prosec.runtime.receipts import build_receipt

from .project import Project, intent

WAVE = ["b", "c", "e", "f"]  # one wave of four renders between the gateway and the sink
EDGES = [
    *[(node, "g", "@atomic") for node in WAVE],
    *[("d", node, "@atomic") for node in WAVE],
]
TOML = (
    f'[run]\njobs = 4\n\n[render.default]\nkind = "command"\n'
    f'command = ["{sys.executable}", "renders/node.py"]\n'
)
# `prosec` in a process whose group window is a minute: each wave commits as one group
# (the renders of a wave finishing a little apart must not split it in this test)
GROUPED = (
    "import sys; import prosec.runtime.executor as engine; engine.GROUP_WINDOW = 60.0; "
    "from prosec.compiler.cli import main; sys.argv = ['prosec', *sys.argv[1:]]; main()"
)


def make(root: Path) -> Project:
    nodes = {"g": {"wake_source": "external"}, "d": {}, **{node: {} for node in WAVE}}
    project = Project.create(root, intent(nodes, EDGES, ["g"]), toml=TOML)
    for node in WAVE:
        project.world(node, {"role": node})
    return project


def grouped(project: Project, *args: str, crash: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PROSEC_CRASH_AT"}
    if crash:
        env["PROSEC_CRASH_AT"] = crash
    return subprocess.run(
        [sys.executable, "-c", GROUPED, *args],
        cwd=project.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def durable(project: Project) -> dict[str, bytes]:
    state = project.root / "state"
    return {
        str(path.relative_to(state)): path.read_bytes()
        for path in sorted(state.rglob("*"))
        if path.is_file() and path.name != ".lock" and ".cache" not in path.parts
    }


def only_run(project: Project) -> str:
    (run,) = [p.name for p in (project.root / "runs").iterdir()]
    return run


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    project = make(tmp_path_factory.mktemp("reference") / "p")
    ran = grouped(project, "run", ".")
    assert ran.returncode == 0, ran.stderr
    return durable(project)


def check_recovered(project: Project, run_id: str, reference: dict[str, bytes]) -> None:
    resumed = project.prosec("resume", run_id, "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert durable(project) == reference
    assert not (project.root / "state" / JOURNAL).exists()
    assert not list((project.root / "state/world-model").glob("*/pending.json"))
    run = project.run_dir(run_id)
    for node in ["g", "d", *WAVE]:  # each node committed exactly once in the run
        lines = (run / "receipts" / f"{node}.jsonl").read_text().splitlines()
        assert len(lines) == 1, node
    log = project.log(run_id)
    assert log[-1].startswith("---end ")
    for node in ["g", "d", *WAVE]:  # one vm.log marker per commit, none lost or doubled
        assert sum(1 for line in log if f"→ {node} ✓ rendered" in line) == 1, (node, log)
    verify = project.prosec("receipts", "verify", ".")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert project.renders()["d"] == 1


@pytest.mark.parametrize(
    "point",
    ["after-journal", "after-ledger", "after-publish", "after-log", "after-apply", "after-sync"],
)
def test_a_kill_inside_a_group_commit_recovers(
    tmp_path: Path, point: str, reference: dict[str, bytes]
) -> None:
    project = make(tmp_path / "p")
    killed = grouped(project, "run", ".", crash=f"{point}:e")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    journal = project.root / "state" / JOURNAL
    records, frames = decode_journal(journal.read_bytes(), str(journal))
    assert sorted(r["receipt"]["node"] for r in records) == WAVE  # the wave is one group
    assert sorted(node for node, _, _ in frames) == WAVE
    run_id = only_run(project)
    check_recovered(project, run_id, reference)


def test_what_a_group_applied_but_never_synced_is_rebuilt_from_its_journal(
    tmp_path: Path, reference: dict[str, bytes]
) -> None:
    """A power cut after apply can lose any unsynced write: the journal alone must be
    enough. Kill after apply, then undo every write the group made (ledgers, versions,
    pending records, run ledgers, log markers) and damage a published file."""
    project = make(tmp_path / "p")
    killed = grouped(project, "run", ".", crash="after-apply:b")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    run_id = only_run(project)
    state, run = project.root / "state/world-model", project.run_dir(run_id)
    for node in WAVE:
        (state / node / "receipts.jsonl").unlink()
        (state / node / "pending.json").unlink()
        for version in (state / node / "versions").iterdir():
            version.unlink()
        (run / "receipts" / f"{node}.jsonl").unlink()
    (state / "c/published/truth.json").write_text("{damaged")
    log = run / "vm.log.md"
    lines = log.read_text().splitlines()
    kept = [line for line in lines if not any(f"→ {n} ✓" in line for n in WAVE)]
    log.write_text("\n".join(kept) + "\n")
    check_recovered(project, run_id, reference)


def test_a_group_pays_a_handful_of_syncs_not_fourteen_per_commit(tmp_path: Path) -> None:
    """The cold run's commits of the four-node wave take one journal write (two fsyncs)
    and one syncfs, however many commits the group holds."""
    project = make(tmp_path / "p")
    probe = (
        "import os, sys; import prosec.runtime.executor as engine; import prosec.runtime.fsio "
        "as fsio; engine.GROUP_WINDOW = 60.0; count = [0, 0]; real, syncfs = os.fsync, "
        "fsio._SYNCFS\n"
        "def fsync(fd): count[0] += 1; real(fd)\n"
        "def sync(fd): count[1] += 1; return syncfs(fd)\n"
        "os.fsync, fsio._SYNCFS = fsync, sync\n"
        "from prosec.compiler.cli import main; sys.argv = ['prosec', 'run', '.']\n"
        "try:\n    main()\nfinally:\n    print(json.dumps(count), file=sys.stderr)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", "import json\n" + probe],
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    fsyncs, syncs = json.loads(ran.stderr.strip().splitlines()[-1])
    # three groups (g, the wave, d): 2 fsyncs and 1 syncfs each; the rest (about 23) is
    # the first run's setup, run creation and the end marker, none of it per commit
    assert syncs == 3, ran.stderr
    assert fsyncs + syncs <= 3 * 3 + 25, (fsyncs, syncs)  # per-render commits: ~100


def test_the_journal_is_checked_whole(tmp_path: Path) -> None:
    files = {"truth.json": b'{"a": 1}'}
    address = content_address(files)
    receipt = build_receipt(
        node="b",
        prev=None,
        contract_fingerprint="sha256:" + "0" * 64,
        wake_source="input",
        wake_refs=[],
        input_fingerprints=[],
        fingerprints={"@atomic": "sha256:" + "1" * 64},
        status="rendered",
        semantic_diff={"changed": ["@atomic"]},
    )
    record = {"run_id": "r", "receipt": receipt, "version": address, "marker": "1→ b ✓ rendered"}
    data = encode_journal([record], [("b", address, encode_frame(files))])  # type: ignore[list-item]
    records, frames = decode_journal(data, "journal")
    assert records == [record] and frames[0][2] == encode_frame(files)
    for damaged in (data[:-1], data[:-1] + b"X", data + b"extra", b"OPCG0" + data[5:]):
        with pytest.raises(BackendError):
            decode_journal(damaged, "journal")
    path = tmp_path / "ledger.jsonl"
    append_line(path, b"one", durable=False)
    assert path.read_bytes() == b"one\n"


def test_a_kept_head_is_used_only_for_the_very_ledger_it_was_verified_from(
    tmp_path: Path,
) -> None:
    """state/.cache/heads.json spares an unchanged run re-verifying every chain; a
    ledger edited in place (same size) is verified again, and refused."""
    project = make(tmp_path / "p")
    assert grouped(project, "run", ".").returncode == 0
    assert project.prosec("run", ".").returncode == 0  # verified, then kept
    assert (project.root / "state/.cache/heads.json").is_file()
    ledger = project.root / "state/world-model/b/receipts.jsonl"
    data = ledger.read_bytes()
    ledger.write_bytes(data.replace(b'"status":"rendered"', b'"status":"renderee"', 1))
    assert len(ledger.read_bytes()) == len(data)
    refused = project.prosec("run", ".")
    assert refused.returncode == 2, refused.stderr
    assert "cannot be trusted" in refused.stderr
