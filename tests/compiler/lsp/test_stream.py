"""The server's stream (issue 9, defect 12): a frame with a wrong `Content-Length` never
swallows the messages after it, a request with malformed params gets a -32602 reply, and
a burst of edits to a large buffer never stops the server answering."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from prosec.compiler.lsp.stream import Framer

from .raw import RawServer, frame, notification, request

A = request(1, "a")
B = request(2, "b")


def frames(data: bytes, *, chunk: int | None = None, max_body: int = 1 << 20) -> list[tuple]:
    """Every frame a Framer finds in `data` (fed whole or in chunks), then idle."""
    framer = Framer(max_body=max_body)
    found = []
    pieces = [data] if chunk is None else [data[i : i + chunk] for i in range(0, len(data), chunk)]
    for piece in pieces:
        framer.feed(piece)
        while (got := framer.next_frame()) is not None:
            found.append(got)
    while (got := framer.next_frame(idle=True)) is not None:
        found.append(got)
    return [(f.body, f.problem is not None) for f in found] + [tuple(framer.problems)]


def body(message: dict) -> bytes:
    return frame(message).split(b"\r\n\r\n", 1)[1]


@pytest.mark.parametrize("chunk", [None, 1, 7])
def test_well_formed_frames_pass_whole_or_byte_by_byte(chunk: int | None) -> None:
    data = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" + frame(A) + frame(B)
    assert frames(data, chunk=chunk) == [(body(A), False), (body(B), False), ()]


@pytest.mark.parametrize("chunk", [None, 1])
def test_a_length_too_large_is_cut_at_the_next_header(chunk: int | None) -> None:
    result = frames(frame(A, 500) + frame(B), chunk=chunk)
    assert result == [(body(A), True), (body(B), False), ()]


def test_a_length_too_small_is_extended_to_the_next_header() -> None:
    assert frames(frame(A, 10) + frame(B)) == [(body(A), True), (body(B), False), ()]


def test_a_last_frame_with_a_wrong_length_is_taken_once_the_client_waits() -> None:
    assert frames(frame(A, 10)) == [(body(A), True), ()]
    assert frames(frame(A, 5000)) == [(body(A), True), ()]


def test_unusable_headers_are_skipped_with_a_note() -> None:
    (b_only, problems) = frames(b"Content-Length: abc\r\n\r\n" + body(A) + frame(B))
    assert b_only == (body(B), False) and problems[0].startswith("skipped")
    huge = frames(frame(A, 10**15) + frame(B))
    assert huge[0] == (body(B), False)
    assert "a frame of 1000000000000000 bytes" in huge[1][0]


# -- the real process -----------------------------------------------------------------------


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawServer]:
    (tmp_path / "prose.toml").write_text("")
    running = RawServer(cwd=tmp_path)
    yield running
    if running.process.poll() is None:
        running.process.kill()
        running.process.wait()


BAD_FRAMES = {
    "length too large": frame(notification("$/noise"), 400),
    "length too small": frame(notification("$/noise"), 7),
    "length not a number": b"Content-Length: twelve\r\n\r\n" + body(notification("$/noise")),
    "length absurd": frame(notification("$/noise"), 10**15),
    "no header at all": b'{"jsonrpc": "2.0"}\r\n\r\n',
    "body not JSON": frame(b"{this is not json}"),
}


@pytest.mark.parametrize("bad", BAD_FRAMES.values(), ids=BAD_FRAMES.keys())
def test_a_bad_frame_never_swallows_shutdown_and_exit(
    server: RawServer, tmp_path: Path, bad: bytes
) -> None:
    server.send(bad)
    server.initialize(tmp_path)
    server.send(request(2, "workspace/symbol", {"query": ""}))
    assert server.reply(2)["result"] == []
    assert server.close() == 0
    assert server.logs(), "the problem is reported to the client"


def test_a_request_framed_too_long_is_still_answered(server: RawServer, tmp_path: Path) -> None:
    params = {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}
    server.send(frame(request(1, "initialize", params), 100_000))
    assert "result" in server.reply(1)
    assert server.close() == 0


MALFORMED = {
    "params of the wrong type": {"textDocument": 5, "position": "top"},
    "params missing": None,
    "a negative position": {
        "textDocument": {"uri": "file:///x.prose.md"},
        "position": {"line": -1, "character": 0},
    },
}


@pytest.mark.parametrize("params", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_params_get_an_invalid_params_reply(
    server: RawServer, tmp_path: Path, params: object
) -> None:
    server.initialize(tmp_path)
    server.send(request(7, "textDocument/hover", params))
    error = server.reply(7)["error"]
    assert error["code"] == -32602 and "textDocument/hover" in error["message"]
    # a notification with bad params gets no reply, and the server goes on
    server.send(notification("textDocument/didOpen", {"textDocument": []}))
    server.send(request(8, "workspace/symbol", {"query": ""}))
    assert server.reply(8)["result"] == []
    assert server.close() == 0


def test_messages_that_are_not_json_rpc_get_an_error_reply(
    server: RawServer, tmp_path: Path
) -> None:
    server.initialize(tmp_path)
    server.send(frame(b"[1, 2, 3]"), frame(b"{oops"))
    assert server.reply(None)["error"]["code"] in (-32600, -32700)
    server.send(request(3, "workspace/symbol", {"query": ""}))
    assert server.reply(3)["result"] == []
    assert server.close() == 0


# -- large buffers ----------------------------------------------------------------------


def _contract(size: int) -> str:
    """A responsibility of about `size` characters, most of them `####` facets: the
    costliest text to analyse per character."""
    head = (
        "---\nname: huge\nkind: responsibility\n---\n\n# Huge\n\n### Goal\n\n"
        "A weekly summary of everything the other nodes know.\n\n### Maintains\n\n"
        "One summary per week; render timestamps are immaterial.\n\n"
    )
    parts = []
    length, section = len(head), 0
    while length < size:
        part = (
            f"#### part-{section}\nSection {section} of the summary: the three most important "
            "changes of the week, each with its source and owner. Material: the changes.\n\n"
        )
        parts.append(part)
        length += len(part)
        section += 1
    return head + "".join(parts) + "### Continuity\n\n- input-driven\n"


def _open_and_burst(server: RawServer, path: Path, edits: int = 20) -> tuple[str, float]:
    """Open `path`, wait for its first diagnostics, then send `edits` edits at once;
    returns the URI and how long the first analysis took."""
    uri = path.as_uri()
    text = path.read_text()
    sent = server.send(
        notification(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}},
        )
    )
    arrived, _ = server.wait(lambda m: _diagnostics_of(m, uri, 1), timeout=120)
    time.sleep(0.3)  # a pause longer than the debounce: the burst's first edit is linted at once
    lines = text.count("\n")
    changes = [
        notification(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [
                    {
                        "range": {
                            "start": {"line": lines, "character": 0},
                            "end": {"line": lines, "character": 0},
                        },
                        "text": "x",
                    }
                ],
            },
        )
        for version in range(2, edits + 2)
    ]
    server.send(*changes)
    return uri, arrived - sent


def _diagnostics_of(message: dict, uri: str, version: int | None = None) -> bool:
    if message.get("method") != "textDocument/publishDiagnostics":
        return False
    params = message["params"]
    return params["uri"] == uri and (version is None or params.get("version") == version)


def test_a_burst_of_edits_is_analysed_once_at_its_latest_version(
    server: RawServer, tmp_path: Path
) -> None:
    path = tmp_path / "huge.prose.md"
    path.write_text(_contract(900_000))  # under the live limit: every analysis parses it
    server.initialize(tmp_path)
    uri, _ = _open_and_burst(server, path)
    mark = len(server.received)
    server.wait(lambda m: _diagnostics_of(m, uri, 21), timeout=120)
    time.sleep(0.3)
    versions = [
        m["params"]["version"] for _, m in server.received[mark:] if _diagnostics_of(m, uri)
    ]
    assert versions[-1] == 21 and len(versions) <= 2, versions
    assert server.close() == 0


def test_the_server_answers_while_a_large_buffer_is_analysed(
    server: RawServer, tmp_path: Path
) -> None:
    path = tmp_path / "huge.prose.md"
    path.write_text(_contract(1_040_000))  # just under the live limit: a slow lint
    server.initialize(tmp_path)
    uri, _ = _open_and_burst(server, path)
    mark = len(server.received)
    asked = server.send(request(50, "shutdown"))
    answered, _ = server.wait(lambda m: m.get("id") == 50 and "method" not in m)
    # the loop never waits for the lint the burst started: shutdown is answered first
    burst = [m for t, m in server.received[mark:] if t <= answered and _diagnostics_of(m, uri)]
    assert burst == [] and answered - asked < 1.0, (answered - asked, burst)
    server.send(notification("exit"))
    assert server.process.stdin is not None
    server.process.stdin.close()
    assert server.process.wait(60) == 0


def test_a_buffer_over_the_live_limit_gets_one_diagnostic(
    server: RawServer, tmp_path: Path
) -> None:
    path = tmp_path / "huge.prose.md"
    path.write_text(_contract(5_600_000))
    server.initialize(tmp_path)
    started = time.perf_counter()
    uri, _ = _open_and_burst(server, path)
    _, message = server.wait(lambda m: _diagnostics_of(m, uri, 21), timeout=120)
    assert time.perf_counter() - started < 30
    (problem,) = message["params"]["diagnostics"]
    assert problem["code"] == "file_too_large" and problem["range"]["start"]["line"] == 0
    assert server.close() == 0
