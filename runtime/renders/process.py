"""Render processes never outlive their runner: each is spawned in its own process group,
recorded in the run directory before it does any work, and killed with its whole group
when it ends, times out, or the runner stops; the next runner kills what a killed runner
left behind.

A render process starts behind a gate: `/bin/sh` waits for one line on its stdin before
it `exec`s the render's command. The runner writes the line only after the group's
record (`runs/{id}/procs/{node}.{attempt}.json`) is written, so a runner killed before
that leaves a shell that reads end-of-file and exits without running anything. After the
render's own process exits, every process still in its group is killed (a render is
done when its process is), then the record is removed. A record that outlives its runner
names a group `kill_survivors` kills, once it has checked the group is still the same
one (same boot, same leader start time, or a member carrying the render's PROSEC_RUN_ID
and PROSEC_NODE). A process that leaves its session (`setsid`) escapes process groups;
that is the limit of this tracking.

The output of a render (stdout and stderr) goes through a pipe into
`workspace/{node}/__render.log`, of which the last `LOG_LIMIT` bytes are kept; a note at
the top says when earlier output was dropped.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..fsio import atomic_write_bytes
from . import RenderOutcome, RenderRequest

__all__ = [
    "GATE",
    "LOG_FILE",
    "LOG_LIMIT",
    "PROCS",
    "kill_survivors",
    "new_attempt",
    "run_render_process",
    "stopped_renders",
]

LOG_FILE = "__render.log"
LOG_LIMIT = 4 * 1024 * 1024
PROCS = "procs"
DRAIN = 1.0  # seconds of output still copied after the render's group was killed
# $0 is the file the render reads as stdin; "$@" the render's command line.
GATE = 'read -r go || exit 125; exec "$@" < "$0"'
_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")

_live: dict[int, Path] = {}  # pgid → record, for the groups this process started
_live_lock = threading.Lock()
_stopping = threading.Event()  # set once the runner stops: no gate opens after that


def new_attempt() -> str:
    """A fresh, unguessable attempt id (names the staging folder and the record)."""
    return secrets.token_hex(6)


def run_render_process(
    argv: Sequence[str],
    request: RenderRequest,
    env: Mapping[str, str],
    timeout: float,
    stdin: Path | None = None,
) -> RenderOutcome:
    """Run one render process to its end (or its timeout) and describe how it ended."""
    missing = _missing_program(argv[0], env, request.root)
    if missing is not None:
        return RenderOutcome(ok=False, error="spawn", detail=missing)
    with _CappedLog.open(request.workspace / LOG_FILE) as log:
        gate_read, gate_write = os.pipe()
        try:
            process = subprocess.Popen(
                ["/bin/sh", "-c", GATE, str(stdin or os.devnull), *argv],
                cwd=request.root,
                env=dict(env),
                stdin=gate_read,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            os.close(gate_write)
            return RenderOutcome(ok=False, error="spawn", detail=f"cannot run {argv[0]!r}: {exc}")
        finally:
            os.close(gate_read)
        assert process.stdout is not None
        record = request.run_dir / PROCS / f"{request.node}.{request.attempt or process.pid}.json"
        try:
            with _pump(process.stdout.fileno(), log):
                try:
                    outcome = _start_and_wait(process, gate_write, request, timeout, record)
                finally:
                    _end_group(process, record)
        finally:
            process.stdout.close()
        if log.full is not None:  # not judged: the run stops as on any full disk (exit 2)
            raise log.full  # and a resume renders the node again
    return outcome or _ended(process.wait(), _log_name(request))


def _start_and_wait(
    process: subprocess.Popen[bytes],
    gate_write: int,
    request: RenderRequest,
    timeout: float,
    record: Path,
) -> RenderOutcome | None:
    """Record the group, open the gate, wait; an outcome when it did not simply exit."""
    with os.fdopen(gate_write, "wb", buffering=0) as gate:
        try:
            _record(request, process.pid, record)
        except OSError as exc:
            return RenderOutcome(
                ok=False, error="spawn", detail=f"cannot record the render process: {exc}"
            )
        with _live_lock:
            if _stopping.is_set():  # the runner is stopping: the gate stays shut
                detail = "the runner stopped before the render started"
                return RenderOutcome(ok=False, error="interrupted", detail=detail)
            _live[process.pid] = record
        with contextlib.suppress(BrokenPipeError):
            gate.write(b"go\n")
    if not _wait_exit(process, timeout):
        return RenderOutcome(ok=False, error="timeout", detail=f"render exceeded {timeout:g}s")
    return None


def _log_name(request: RenderRequest) -> str:
    """The render's log as a path from the project root (receipts hold no machine paths)."""
    log = request.workspace / LOG_FILE
    try:
        return log.relative_to(request.root).as_posix()
    except ValueError:
        return str(log)


def _ended(code: int, log: str = LOG_FILE) -> RenderOutcome:
    if code == 0:
        return RenderOutcome(ok=True)
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return RenderOutcome(
            ok=False,
            error=f"killed-by-{name}",
            detail=f"render was killed by {name} (signal {-code}); see {log}",
        )
    return RenderOutcome(
        ok=False, error=f"exit-{code}", detail=f"render exited with status {code}; see {log}"
    )


def _missing_program(program: str, env: Mapping[str, str], cwd: Path) -> str | None:
    """Why `program` cannot be started (None when it can): the shell would only say so
    in the log, with status 127."""
    if "/" in program:
        path = cwd / program
        if not path.is_file() or not os.access(path, os.X_OK):
            return f"cannot run {program!r}: no executable file at {path}"
        return None
    if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        return f"cannot run {program!r}: not found on the render's PATH"
    return None


# -- records ---------------------------------------------------------------------------


def _record(request: RenderRequest, pid: int, path: Path) -> None:
    record = {
        "pgid": pid,
        "run_id": request.run_id,
        "node": request.node,
        "attempt": request.attempt,
        "boot": _boot_id(),
        "start": _start_time(pid),
        "runner": os.getpid(),
        "runner_start": _start_time(os.getpid()),
    }
    # The record must outlive the runner's process, not the machine: a reboot ends every
    # render too (the boot id says so). The page cache survives a killed process, so
    # no fsync is needed.
    atomic_write_bytes(path, json.dumps(record, sort_keys=True).encode() + b"\n", durable=False)


def _end_group(process: subprocess.Popen[bytes], record: Path) -> None:
    """Kill whatever is left of the group, reap the leader, drop the record."""
    _killpg(process.pid)
    process.wait()
    with _live_lock:
        _live.pop(process.pid, None)
    record.unlink(missing_ok=True)


def _killpg(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


@contextlib.contextmanager
def stopped_renders() -> Iterator[int]:
    """Kill every render process group this runner started and has not ended, and keep
    every gate shut while the block runs (the runner waits for its render threads
    there: each ends at once); yields how many groups were killed. For Ctrl-C, SIGTERM
    or any error that stops the runner."""
    with _live_lock:
        _stopping.set()
        groups = list(_live)
    for pgid in groups:
        _killpg(pgid)
    try:
        yield len(groups)
    finally:
        _stopping.clear()


def kill_survivors(runs_dir: Path) -> list[str]:
    """Kill the render groups that runners before us recorded and left running; remove
    their records. Returns one description per group killed."""
    killed = []
    for path in sorted(runs_dir.glob(f"*/{PROCS}/*.json")):
        record = _read_record(path)
        if record is not None and _runner_alive(record):
            continue  # another runner's live render (another backend on this root)
        if record is not None and _ours(record):
            _killpg(record["pgid"])
            killed.append(f"run {record['run_id']} node {record['node']!r}")
        path.unlink(missing_ok=True)
    return killed


def _runner_alive(record: Mapping[str, Any]) -> bool:
    """Whether the runner that recorded the group still runs (then it is not a survivor)."""
    runner = record.get("runner")
    if not isinstance(runner, int) or runner < 1 or record.get("boot") != _boot_id():
        return False
    start = _start_time(runner)
    if start is not None or Path("/proc").is_dir():
        return start is not None and start == record.get("runner_start")
    try:
        os.kill(runner, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_record(path: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    fields = {"pgid": int, "run_id": str, "node": str}
    if not isinstance(record, dict) or not all(
        isinstance(record.get(key), kind) for key, kind in fields.items()
    ):
        return None
    return record if record["pgid"] > 1 else None


def _ours(record: Mapping[str, Any]) -> bool:
    """Whether the recorded group still runs and is still the render's (not a reused id)."""
    pgid = record["pgid"]
    if record.get("boot") != _boot_id():
        return False  # rebooted since: nothing of it survives
    if not Path("/proc").is_dir():
        try:
            os.killpg(pgid, 0)
        except OSError:
            return False
        return True  # no way to check its identity here: the group exists
    if record.get("start") is not None and _start_time(pgid) == record["start"]:
        return True  # the leader itself is still running
    marks = {f"PROSEC_RUN_ID={record['run_id']}".encode(), f"PROSEC_NODE={record['node']}".encode()}
    for pid in _group_members(pgid):
        with contextlib.suppress(OSError):
            environ = set(Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"))
            if marks <= environ:
                return True
    return False


def _proc_stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (field 3 onwards)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_bytes().decode("ascii", "replace")
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def _start_time(pid: int) -> int | None:
    fields = _proc_stat(pid)
    return int(fields[19]) if fields and len(fields) > 19 else None


def _group_members(pgid: int) -> Iterator[int]:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _proc_stat(int(entry.name))
            if fields and len(fields) > 2 and fields[2] == str(pgid):
                yield int(entry.name)


def _boot_id() -> str | None:
    try:
        return _BOOT_ID.read_text(encoding="ascii").strip()
    except OSError:
        return None


# -- waiting -------------------------------------------------------------------------------


def _wait_exit(process: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait until the process exits, leaving it unreaped where the platform allows (so
    its group id cannot be reused before the group is killed); False on timeout."""
    if not hasattr(os, "waitid"):  # e.g. macOS: reap, then kill the group at once
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    deadline = time.monotonic() + timeout
    pidfd = _pidfd(process.pid)
    try:
        delay = 0.001
        while not _exited(process.pid):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if pidfd is not None:
                _readable(pidfd, remaining)
            else:
                time.sleep(min(delay, remaining))
                delay = min(delay * 2, 0.05)
        return True
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _exited(pid: int) -> bool:
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # already reaped
        return True


def _pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        fd: int = opener(pid)
    except OSError:
        return None
    return fd


def _readable(fd: int, timeout: float) -> bool:
    """Whether `fd` became readable (or hung up) within `timeout` seconds (poll(2): no
    FD_SETSIZE limit, unlike select)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(max(0, min(timeout, 86_400)) * 1000))


# -- the capped log ------------------------------------------------------------------------


class _CappedLog:
    """An append-only log keeping its last LOG_LIMIT bytes (trimmed when it doubles)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self.fd = fd
        self.size = os.fstat(fd).st_size
        self.dropped = 0
        # the device filled up under the log: the render ran on a full disk, so its
        # outcome says nothing about the render (its own writes likely failed too)
        self.full: OSError | None = None

    @classmethod
    @contextlib.contextmanager
    def open(cls, path: Path) -> Iterator[_CappedLog]:
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(path, flags, 0o644)
        except OSError:  # a render left a symlink (or a folder) in its place
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
            fd = os.open(path, flags, 0o644)
        log = cls(path, fd)
        try:
            yield log
        finally:
            log.close()

    def write(self, data: bytes) -> None:
        if self.full is not None:  # keep draining the pipe, so the render never blocks
            return
        view = memoryview(data)
        try:
            while view:
                written = os.write(self.fd, view)
                view = view[written:]
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            self.full = exc
            return
        self.size += len(data)
        if self.size > 2 * LOG_LIMIT:
            self._trim(b"")

    def _trim(self, note: bytes) -> None:
        keep = min(self.size, LOG_LIMIT)
        tail = os.pread(self.fd, keep, self.size - keep)
        self.dropped += self.size - keep
        os.ftruncate(self.fd, 0)
        os.write(self.fd, note + tail)
        self.size = len(note) + len(tail)

    def close(self) -> None:
        try:
            if self.dropped or self.size > LOG_LIMIT:
                dropped = self.dropped + max(self.size - LOG_LIMIT, 0)
                note = (
                    f"[prosec: {LOG_FILE} keeps the last {LOG_LIMIT // (1024 * 1024)} MiB of "
                    f"output; {dropped:,} earlier bytes were dropped]\n"
                ).encode()
                self._trim(note)
        finally:
            os.close(self.fd)


@contextlib.contextmanager
def _pump(fd: int, log: _CappedLog) -> Iterator[None]:
    """Copy the render's output into the log from a thread until the block ends (the
    group is dead by then); then drain what is left, for at most DRAIN seconds: a
    process that escaped the group may hold the pipe open and write forever."""
    stop = threading.Event()

    def copy() -> None:
        deadline = None
        while deadline is None or time.monotonic() < deadline:
            if not _readable(fd, 0.05):
                if stop.is_set():
                    return
                continue
            data = os.read(fd, 65536)
            if not data:
                return
            log.write(data)
            if deadline is None and stop.is_set():
                deadline = time.monotonic() + DRAIN

    thread = threading.Thread(target=copy, name="prosec-render-log", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
