"""The namespaces of a backend's key/value store: the one module that spells its keys.

A key is `{namespace}.{name}`:

| namespace  | name          | value                                                   |
|------------|---------------|---------------------------------------------------------|
| `caller`   | caller input  | `{"fingerprinted": …, "text": …}` (bound with --input)  |
| `external` | gateway node  | `{"data": …}`, the last trigger data                    |
| `clock`    | clocked node  | `{"last_render": "YYYY-MM-DDTHH:MM:SSZ"}` (cadences)    |
| `inbox`    | `claim`       | `{"run_id": …, "ids": […]}` while a drain records wakes, else null |
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Namespace", "caller_key", "clock_key", "external_key", "inbox_claim_key", "parse_key"]


class Namespace(StrEnum):
    CALLER = "caller"
    EXTERNAL = "external"
    CLOCK = "clock"
    INBOX = "inbox"


def _key(namespace: Namespace, name: str) -> str:
    return f"{namespace.value}.{name}"


def caller_key(name: str) -> str:
    """The key of a caller input's binding."""
    return _key(Namespace.CALLER, name)


def external_key(node: str) -> str:
    """The key of a gateway's last trigger data."""
    return _key(Namespace.EXTERNAL, node)


def clock_key(node: str) -> str:
    """The key of a clocked node's last render time."""
    return _key(Namespace.CLOCK, node)


def inbox_claim_key() -> str:
    """The key of the inbox's write-ahead claim (runtime/inbox.py)."""
    return _key(Namespace.INBOX, "claim")


def parse_key(key: str) -> tuple[Namespace, str]:
    """`external.mail-feed` → (Namespace.EXTERNAL, "mail-feed"); ValueError otherwise."""
    prefix, dot, name = key.partition(".")
    if not dot or not name or prefix not in tuple(Namespace):
        raise ValueError(f"state key {key!r} is not `<{'|'.join(Namespace)}>.<name>`")
    return Namespace(prefix), name
