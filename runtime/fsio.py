"""Crash-safe file primitives: atomic writes, fsync'd appends, and confined path joins."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

from .canonical import PathError, normalize_path

__all__ = [
    "PathEscapeError",
    "append_line",
    "atomic_write_bytes",
    "atomic_write_text",
    "confined",
    "disk_full",
    "fsync_dir",
    "is_leftover",
    "remove_leftovers",
    "repair_torn_tail",
    "replace_dir",
    "safe_name",
    "sync_filesystem",
]


class PathEscapeError(PathError):
    """A path that would leave its confining directory (via `..`, absolute, or symlink)."""


def disk_full(exc: BaseException) -> bool:
    """Whether `exc` says the device (or the user's quota) has no space left: the
    environment failed, not the code that was writing."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def fsync_dir(path: Path) -> None:
    """fsync a directory so a rename or a new entry inside it is durable."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(
    path: Path, data: bytes, *, durable: bool = True, mode: int | None = None
) -> None:
    """Write `data` to `path` atomically: temp file in the same dir, fsync, rename, fsync dir.

    `durable=False` keeps the atomic rename but skips the fsyncs, for derived files
    that are rebuilt from durable state (a run's materialized inputs, render context).
    `mode` sets the permission bits before the rename (to keep those of a rewritten file).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    # the pid lets `remove_leftovers` tell a dead writer's temp file from a live one's
    tmp = path.with_name(f".{path.name}.tmp-{secrets.token_hex(4)}-{os.getpid()}")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    if durable:
        fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str) -> None:
    """Atomically write UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))


def sync_filesystem(path: Path) -> None:
    """Make every write to the filesystem holding `path` durable at once: syncfs(2) on
    Linux (one flush for a whole group commit), sync(2) where it is missing. A write-back
    error the kernel reports is raised as OSError."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if _SYNCFS is None:
            os.sync()
        elif _SYNCFS(fd) != 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code), str(path))
    finally:
        os.close(fd)


def _load_syncfs() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function = libc.syncfs
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return None
    function.argtypes = [ctypes.c_int]
    function.restype = ctypes.c_int
    return cast("Callable[[int], int]", function)


_SYNCFS = _load_syncfs()


def append_line(path: Path, line: bytes, *, durable: bool = True) -> None:
    """Append one line (a trailing newline is added) and fsync before returning.

    A single `write` of the whole line keeps appends from interleaving; a crash can
    leave at most a torn last line, which readers detect (no trailing newline).
    `durable=False` skips the fsyncs, for a group commit that syncs the filesystem once
    (runtime/groupcommit.py) behind a durable journal.
    """
    if b"\n" in line:
        raise ValueError("an appended record must not contain a newline")
    path.parent.mkdir(parents=True, exist_ok=True)
    created = not path.exists()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        size = os.fstat(fd).st_size
        payload = line + b"\n"
        try:
            written = os.write(fd, payload)
            if written != len(payload):  # a full disk can take part of a write
                raise OSError(errno.ENOSPC, f"short append: {written} of {len(payload)} bytes")
            if durable:
                os.fsync(fd)
        except OSError as exc:
            # never leave a torn line behind a failed append: cut back to where it began
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
                os.fsync(fd)
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
    finally:
        os.close(fd)
    if created and durable:
        fsync_dir(path.parent)


# what an interrupted atomic_write_bytes / replace_dir leaves beside its target
_LEFTOVER = re.compile(r"^\..+\.(?:tmp|new|old)-[0-9a-f]{8}(?:-(\d{1,10}))?$")


def is_leftover(name: str) -> bool:
    """A temp file or half-swapped folder an interrupted write left (not state)."""
    return _LEFTOVER.match(name) is not None


def remove_leftovers(base: Path) -> list[str]:
    """Remove the temp files and half-swapped folders interrupted writes left under
    `base`, but for temp files of writers still alive (their name carries the pid);
    returns their paths, relative."""
    removed: list[str] = []
    if not base.is_dir() or base.is_symlink():
        return removed
    # one scandir per folder (a leftover's name starts with a dot: only those are matched);
    # folders are entered unless they are symlinks or leftovers themselves
    folders = [str(base)]
    while folders:
        folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            found = _LEFTOVER.match(name) if name.startswith(".") else None
            if found is None:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                except OSError:
                    pass
                continue
            if found.group(1) and _writing(int(found.group(1))):
                continue
            path = Path(entry.path)
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            removed.append(path.relative_to(base).as_posix())
    return sorted(removed)


def repair_torn_tail(path: Path) -> int:
    """Cut a torn last line (bytes after the last newline: an append a crash or a full
    disk interrupted) off an append-only file; returns the bytes removed (0 if none)."""
    try:  # the common case, an intact file, in three system calls
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC  # never a FIFO's wait
        fd = os.open(path, flags)
    except OSError:
        return 0  # missing, a symlink, unreadable: nothing of ours to repair
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
            return 0
        if os.pread(fd, 1, info.st_size - 1) == b"\n":
            return 0
    finally:
        os.close(fd)
    if not path.is_file() or path.is_symlink():
        return 0
    with open(path, "r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return 0
        keep, chunk = 0, 1 << 16
        position = size
        while position > 0:  # find the last newline, reading backwards
            start = max(0, position - chunk)
            handle.seek(start)
            found = handle.read(position - start).rfind(b"\n")
            if found >= 0:
                keep = start + found + 1
                break
            position = start
        handle.truncate(keep)
        handle.flush()
        os.fsync(handle.fileno())
    return size - keep


def _writing(pid: int) -> bool:
    """True when another live process may still be writing (not this one: whatever this
    process left was cut by an exception it already handled)."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def safe_name(name: str, what: str = "name") -> str:
    """Check a single path segment taken from untrusted input (a node name, a file name)."""
    unsafe = any(ord(char) < 0x20 or char in "/\\\x7f" for char in name)
    if not name or name in (".", "..") or unsafe:
        raise PathEscapeError(f"{what} {name!r} is not a safe single path segment")
    return name


def confined(base: Path, relative: str, what: str = "path") -> Path:
    """Join an untrusted relative path under `base`, refusing anything that escapes it.

    Refuses absolute paths and `..` segments, and resolves symlinks so that a link
    pointing outside `base` is refused too.
    """
    try:
        clean = normalize_path(relative)
    except PathError as exc:
        raise PathEscapeError(f"{what}: {exc}") from exc
    candidate = base / clean
    root = base.resolve()
    resolved = candidate.resolve()
    if resolved != root and root not in resolved.parents:
        raise PathEscapeError(f"{what} {relative!r} resolves outside {base.name}/ (symlink?)")
    return candidate


class Confiner:
    """`confined(base, …)` for many paths under one base: the base is resolved once,
    and each folder once; a path's last segment is resolved only when it is a symlink
    (otherwise the path resolves to its folder's resolution joined with that segment,
    what `Path.resolve` finds, without walking every component again). Strings inside:
    a run checks one path per source."""

    def __init__(self, base: Path, what: str = "path") -> None:
        self.base = base
        self.what = what
        self._base = str(base)
        self._root = os.path.realpath(base)
        self._inside = self._root.rstrip(os.sep) + os.sep
        self._folders: dict[str, str] = {}

    def __call__(self, relative: str) -> Path:
        try:
            clean = normalize_path(relative)
        except PathError as exc:
            raise PathEscapeError(f"{self.what}: {exc}") from exc
        candidate = os.path.join(self._base, clean)
        if os.path.islink(candidate):
            resolved = os.path.realpath(candidate)
        else:
            folder, name = os.path.split(candidate)
            real = self._folders.get(folder)
            if real is None:
                real = self._folders[folder] = os.path.realpath(folder)
            resolved = os.path.join(real, name)
        if resolved != self._root and not resolved.startswith(self._inside):
            raise PathEscapeError(
                f"{self.what} {relative!r} resolves outside {self.base.name}/ (symlink?)"
            )
        return self.base / clean


def replace_dir(target: Path, files: dict[str, bytes], *, durable: bool = True) -> None:
    """Replace directory `target` with exactly `files`, as atomically as POSIX allows.

    The new tree is written and fsynced beside the target, then swapped in with two
    renames; a crash between them leaves `target.old-*` which the next call removes.
    Readers that need a consistent view go through the content-addressed blob.
    """
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_swaps(parent)
    staging = parent / f".{target.name}.new-{secrets.token_hex(4)}"
    staging.mkdir()
    try:
        _fill(staging, files, durable=durable)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if target.exists():
        old = parent / f".{target.name}.old-{secrets.token_hex(4)}"
        os.rename(target, old)
        os.rename(staging, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(staging, target)
    if durable:
        fsync_dir(parent)


# folders whose stale swaps this process removed: a folder is scanned once per process,
# not on every replace (a run's world-model/ holds a folder per node)
_SWEPT: set[Path] = set()
_SWAP = re.compile(r"^\..+\.(?:new|old)-[0-9a-f]{8}$")


def _remove_stale_swaps(parent: Path) -> None:
    """Remove what interrupted replaces left in `parent` (`.{name}.new-*` / `.old-*`);
    this process's own interrupted replaces clean up after themselves."""
    if parent in _SWEPT:
        return
    with os.scandir(parent) as entries:
        stale = [entry.path for entry in entries if _SWAP.match(entry.name)]
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)
    _SWEPT.add(parent)


def _fill(staging: Path, files: dict[str, bytes], *, durable: bool) -> None:
    for rel, content in sorted(files.items()):
        dest = staging / normalize_path(rel)
        dest.parent.mkdir(parents=True, exist_ok=True)
        with open(dest, "wb") as handle:
            handle.write(content)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
    if durable:
        for directory in sorted({p for p in staging.rglob("*") if p.is_dir()}, reverse=True):
            fsync_dir(directory)
        fsync_dir(staging)


def read_tree(root: Path) -> dict[str, bytes]:
    """Read every regular file under `root` as relative-path → bytes (symlinks, `root`
    itself included, and special files such as FIFOs refused)."""
    files: dict[str, bytes] = {}
    if root.is_symlink():
        raise PathEscapeError(f"{root} is a symlink; artifacts may not link")
    if not root.exists():
        return files
    for path in _walk_files(root):
        rel = path.relative_to(root).as_posix()
        files[rel] = path.read_bytes()
    return files


def _walk_files(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(dirpath)
        for dirname in list(dirnames):
            if (base / dirname).is_symlink():
                raise PathEscapeError(f"{(base / dirname)} is a symlink; artifacts may not link")
        dirnames.sort()
        for filename in sorted(filenames):
            path = base / filename
            if path.is_symlink():
                raise PathEscapeError(f"{path} is a symlink; artifacts may not link")
            if not stat.S_ISREG(path.lstat().st_mode):  # a FIFO would block the reader
                raise PathEscapeError(f"{path} is not a regular file; artifacts hold files")
            yield path
