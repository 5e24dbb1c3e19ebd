"""The OPWM1 frame: an artifact (path → bytes) as one byte string, files sorted by their
normalized path, each as a length-prefixed path and content; its SHA-256 is the
artifact's content address. `canonical` re-exports all of it."""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Iterable, Mapping

__all__ = [
    "FRAME_MAGIC",
    "FrameError",
    "PathError",
    "content_address",
    "decode_frame",
    "encode_frame",
    "normalize_path",
]

FRAME_MAGIC = b"OPWM1"
_U32 = struct.Struct("<I")


class PathError(ValueError):
    """A path that is absolute, climbs out with `..`, or is otherwise not normalizable."""


def normalize_path(path: str) -> str:
    """Normalize an artifact path: `\\` to `/`, drop empty and `.` segments.

    Raises PathError for absolute paths, `..` segments, NUL bytes and empty results.
    """
    if "\x00" in path:
        raise PathError(f"path {path!r} contains a NUL byte")
    unified = path.replace("\\", "/")
    if unified.startswith("/") or re.match(r"^[A-Za-z]:", unified):
        raise PathError(f"path {path!r} is absolute")
    segments = [segment for segment in unified.split("/") if segment not in ("", ".")]
    if any(segment == ".." for segment in segments):
        raise PathError(f"path {path!r} climbs out of its root with '..'")
    if not segments:
        raise PathError(f"path {path!r} is empty")
    return "/".join(segments)


def encode_frame(files: Mapping[str, bytes] | Iterable[tuple[str, bytes]]) -> bytes:
    """Encode an artifact (path → content) as the OPWM1 frame, files sorted by path bytes."""
    items = files.items() if isinstance(files, Mapping) else files
    normalized: dict[bytes, bytes] = {}
    for path, content in items:
        key = normalize_path(path).encode("utf-8")
        if key in normalized:
            raise PathError(f"path {path!r} appears twice after normalization")
        normalized[key] = bytes(content)
    chunks = [FRAME_MAGIC, _U32.pack(len(normalized))]
    for key in sorted(normalized):
        content = normalized[key]
        chunks += [_U32.pack(len(key)), key, _U32.pack(len(content)), content]
    return b"".join(chunks)


class FrameError(ValueError):
    """Bytes that are not a well-formed OPWM1 frame; `offset` says where decoding stopped."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at byte {offset})")
        self.offset = offset


def decode_frame(data: bytes) -> dict[str, bytes]:
    """Decode an OPWM1 frame into path → content; raises FrameError on any malformation."""
    view = memoryview(data)
    if bytes(view[:5]) != FRAME_MAGIC:
        raise FrameError("missing OPWM1 magic", 0)
    offset = 5

    def take(size: int, what: str) -> bytes:
        nonlocal offset
        if offset + size > len(view):
            raise FrameError(f"truncated {what}", offset)
        chunk = bytes(view[offset : offset + size])
        offset += size
        return chunk

    (count,) = _U32.unpack(take(4, "file count"))
    files: dict[str, bytes] = {}
    previous: bytes | None = None
    for _ in range(count):
        at = offset
        (path_len,) = _U32.unpack(take(4, "path length"))
        raw_path = take(path_len, "path")
        (content_len,) = _U32.unpack(take(4, "content length"))
        content = take(content_len, "content")
        try:
            path = raw_path.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FrameError("path is not UTF-8", at) from exc
        if normalize_path(path) != path:
            raise FrameError(f"path {path!r} is not normalized", at)
        if previous is not None and raw_path <= previous:
            raise FrameError(f"path {path!r} is out of order or repeated", at)
        previous = raw_path
        files[path] = content
    if offset != len(view):
        raise FrameError("trailing bytes after the last file", offset)
    return files


def content_address(files: Mapping[str, bytes]) -> str:
    """Return the ContentAddress (`sha256:` + hex of SHA-256 of the OPWM1 frame)."""
    return "sha256:" + hashlib.sha256(encode_frame(files)).hexdigest()
