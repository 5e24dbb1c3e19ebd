"""`prosec lsp` latency: time from `didChange` to the published diagnostics of that version.

Run with `make bench`. A real client drives the real server process over stdio; the time
is measured in the client, so it includes JSON-RPC both ways. Scenarios: a 5 KB file in
a 50-file project, edited back to back without debounce and typed at ten keys a second
with the default debounce (the aim is a median under 50 ms for both), and the largest
upstream file (82 KB). The machine may be shared: figures vary with its load.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from prosec.compiler.lsp.disk import LocalDisk

from ..compiler.lsp.client import Editor, server_config, start
from ..conftest import REPO, UPSTREAM, prosec_bin
from .aims import record
from .synth import FILES, wired_project
from .timing import byte_compile

pytestmark = pytest.mark.asyncio

EDITS = 40
LARGEST = UPSTREAM / "skills/open-prose/examples/session-to-prose/src/session-to-prose.prose.md"


async def _latencies(client: Editor, uri: str, edits: int, pause: float = 0) -> list[float]:
    """Type one character at a time at the end of the first paragraph after the first
    `###` heading; ms until the diagnostics of that version arrive."""
    await client.diagnostics_of(uri, 1)
    lines = client.texts[uri].split("\n")
    line = next(i for i, text in enumerate(lines) if text.startswith("### ")) + 2
    result = []
    for n in range(edits):
        await asyncio.sleep(pause)
        mark = len(client.published)
        column = len(lines[line].encode("utf-16-le")) // 2
        typed = "x" if n % 2 else " "
        lines[line] += typed
        where = lsp.Range(
            start=lsp.Position(line=line, character=column),
            end=lsp.Position(line=line, character=column),
        )
        sent = time.perf_counter()
        version = client.edit(uri, [lsp.TextEdit(range=where, new_text=typed)])
        await client.diagnostics_of(uri, version, after=mark, timeout=30)
        arrived = next(
            t for t, p in client.published[mark:] if p.uri == uri and p.version == version
        )
        result.append((arrived - sent) * 1000)
    return result


def _report(label: str, size: int, files: int, values: list[float]) -> None:
    ordered = sorted(values)
    p90 = ordered[int(len(ordered) * 0.9) - 1]
    print(
        f"\nlsp didChange→diagnostics {label}: {size / 1000:.1f} KB file, {files} files, "
        f"{len(values)} edits: median {statistics.median(values):.1f} ms, p90 {p90:.1f} ms, "
        f"min {ordered[0]:.1f} ms, max {ordered[-1]:.1f} ms"
    )


@pytest_lsp.fixture(config=server_config("--debounce-ms", "0"))
async def client(lsp_client: Editor) -> AsyncIterator[None]:
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=server_config())
async def debounced(lsp_client: Editor) -> AsyncIterator[None]:
    yield
    await lsp_client.shutdown_session()


async def test_5kb_file_in_a_50_file_project(client: Editor, tmp_path: Path) -> None:
    path = wired_project(tmp_path / "bench")
    await start(client, tmp_path / "bench")
    uri = client.open(path)
    values = await _latencies(client, uri, EDITS)
    _report("(no debounce)", path.stat().st_size, FILES, values)
    record("6-keystroke-5kb", statistics.median(values), f"{EDITS} edits, no debounce")
    assert path.stat().st_size >= 5_000
    assert statistics.median(values) < 50


async def test_5kb_file_typed_with_the_default_debounce(debounced: Editor, tmp_path: Path) -> None:
    path = wired_project(tmp_path / "bench")
    await start(debounced, tmp_path / "bench")
    uri = debounced.open(path)
    values = await _latencies(debounced, uri, EDITS, pause=0.1)
    _report("(default debounce, typing 10 keys/s)", path.stat().st_size, FILES, values)
    assert statistics.median(values) < 50


@pytest.mark.conformance
async def test_largest_upstream_file(client: Editor, upstream: Path) -> None:
    await start(client, LARGEST.parent.parent)
    uri = client.open(LARGEST)
    values = await _latencies(client, uri, 15)
    files = len(LocalDisk().list_sources(LocalDisk().project_root(LARGEST)))
    _report("(largest upstream file)", LARGEST.stat().st_size, files, values)
    record("6-keystroke-82kb", statistics.median(values), "15 edits, no debounce")


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _initialize_ms(root: Path) -> float:
    """Start `prosec lsp` and time from the spawn to the `initialize` response."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "processId": None,
            "rootUri": root.as_uri(),
            "capabilities": {},
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
        },
    }
    start = time.perf_counter()
    server = subprocess.Popen([prosec_bin(), "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    try:
        server.stdin.write(_frame(request))
        server.stdin.flush()
        while True:
            length = 0
            while (header := server.stdout.readline().strip()) != b"":
                if header.lower().startswith(b"content-length:"):
                    length = int(header.split(b":")[1])
            reply = json.loads(server.stdout.read(length))
            if reply.get("id") == 1:
                elapsed = (time.perf_counter() - start) * 1000
                assert "capabilities" in reply["result"]
                return elapsed
    finally:
        server.kill()
        server.wait()


async def test_initialize(tmp_path: Path) -> None:
    """From spawning `prosec lsp` to its `initialize` response, in a 50-file project:
    the best of ten (an editor waits for this before anything else)."""
    wired_project(tmp_path / "bench")
    byte_compile(REPO / "compiler", REPO / "runtime")
    times = sorted(_initialize_ms(tmp_path / "bench") for _ in range(10))
    print(
        f"\nlsp initialize (spawn → response), {FILES}-file project: best {times[0]:.0f} ms, "
        f"median {statistics.median(times):.0f} ms",
        end="",
    )
    record("6-lsp-init", times[0], "best of 10, spawn to response")
