"""One conformance suite for every backend (filesystem, SQLite, PostgreSQL, in-context)."""

from __future__ import annotations

from typing import Any

import pytest
from prosec.runtime.backends import BACKEND_NAMES, BackendError, ChainError
from prosec.runtime.canonical import content_address, encode_frame
from prosec.runtime.receipts import build_receipt, content_hash

from .conftest import Factory


def receipt(node: str, prev: str | None, n: int, status: str = "rendered") -> dict[str, Any]:
    return build_receipt(
        node=node,
        prev=prev,
        contract_fingerprint=f"sha256:{n:064x}",
        wake_source="input",
        wake_refs=[],
        input_fingerprints=[f"sha256:{n + 7:064x}"],
        fingerprints={"@atomic": f"sha256:{n + 9:064x}"},
        status=status,
    )


def test_ledger_chain_and_heads(factory: Factory) -> None:
    backend = factory()
    first = receipt("a", None, 1)
    second = receipt("a", first["content_hash"], 2, status="failed")
    backend.append_receipt("20260101-000000-aaaaaa", first)
    backend.append_receipt("20260101-000000-aaaaaa", second)
    backend.append_receipt("20260101-000000-aaaaaa", receipt("b", None, 3))
    assert backend.ledger("a") == [first, second]
    heads = factory().heads(["a", "b", "c"])
    assert heads["a"].last == second and heads["a"].last_ok == first
    assert heads["a"].hash == second["content_hash"]
    assert heads["c"].last is None and heads["c"].memo() is None
    with pytest.raises(ChainError):
        backend.append_receipt("20260101-000000-aaaaaa", receipt("a", None, 4))
    with pytest.raises(ChainError):
        backend.append_receipt("20260101-000000-aaaaaa", receipt("a", first["content_hash"], 5))


def test_commit_checks_refuse_a_fork_and_a_wrong_hash(factory: Factory) -> None:
    """The shared commit checks run inside every store's append: nothing is stored when
    they refuse, and the chain goes on from the unchanged head."""
    backend = factory()
    first = receipt("a", None, 1)
    backend.append_receipt("20260101-000000-aaaaaa", first)
    second = receipt("a", first["content_hash"], 2)
    fork = receipt("a", None, 3)  # a second chain start: a forked prev
    stale = receipt("a", second["content_hash"], 4)  # a head this store never saw
    forged = {**second, "status": "failed"}  # the body moved, the stated hash did not
    rehashed = {**second, "content_hash": "sha256:" + "0" * 64}
    assert content_hash(forged) != forged["content_hash"]
    for bad in (fork, stale, forged, rehashed):
        with pytest.raises(ChainError, match="'a'"):
            backend.append_receipt("20260101-000000-aaaaaa", bad)
    assert factory().ledger("a") == [first]
    backend.append_receipt("20260101-000000-aaaaaa", second)
    assert factory().heads(["a"])["a"].hash == second["content_hash"]


def test_registered_name_and_durability(factory: Factory, request: pytest.FixtureRequest) -> None:
    backend = factory()
    assert backend.name == request.node.callspec.params["factory"]
    assert backend.name in BACKEND_NAMES
    assert backend.ephemeral is (backend.name == "in-context")


def test_versions_and_published(factory: Factory) -> None:
    backend = factory()
    files = {"truth.json": b'{"a":1}'}
    frame, address = encode_frame(files), content_address(files)
    assert backend.published_version("a") is None
    backend.put_version("a", address, frame)
    backend.put_version("a", address, frame)  # idempotent
    backend.set_published("a", address, files)
    again = factory()
    assert again.get_version("a", address) == frame
    assert again.published_version("a") == address
    with pytest.raises(BackendError):
        backend.put_version("a", "sha256:" + "0" * 64, frame)
    with pytest.raises(BackendError):
        backend.get_version("a", "sha256:" + "1" * 64)


def test_key_values_pending_and_inbox(factory: Factory) -> None:
    backend = factory()
    assert backend.get_value("caller.q") is None
    backend.put_value("caller.q", {"text": "é", "n": [1, 2.5]})
    backend.put_value("caller.q", {"text": "new"})
    assert factory().get_value("caller.q") == {"text": "new"}
    backend.put_pending("a", {"run_id": "r", "receipt": {"x": 1}, "version": None})
    assert factory().pendings() == {"a": {"run_id": "r", "receipt": {"x": 1}, "version": None}}
    backend.clear_pending("a")
    assert factory().pendings() == {}
    for n in range(3):
        backend.enqueue({"node": "g", "source": "external", "refs": [str(n)]})
    queued = factory().inbox()
    assert [w["refs"] for _, w in queued] == [["0"], ["1"], ["2"]]
    assert [w["refs"] for _, w in backend.inbox()] == [["0"], ["1"], ["2"]]  # peeking keeps them
    backend.take([queued[0][0], queued[2][0], "999"])  # absent ids are ignored
    assert [w["refs"] for _, w in factory().inbox()] == [["1"]]
    backend.enqueue({"node": "g", "source": "external", "refs": ["3"]})
    remaining = backend.inbox()
    assert len({wake_id for wake_id, _ in remaining}) == 2  # ids are never reused
    backend.take([wake_id for wake_id, _ in remaining])
    assert factory().inbox() == []


def test_runner_lock_is_exclusive(factory: Factory) -> None:
    first, second = factory(), factory()
    assert first.try_lock()
    assert not second.try_lock()
    first.unlock()
    assert second.try_lock()
    second.unlock()


def test_describe_is_safe(factory: Factory) -> None:
    text = factory().describe() + repr(factory())
    assert "postgresql://" not in text and "@127.0.0.1" not in text
