"""RFC 8785 canonical JSON and sha256 tokens for the compiler (the one rfc8785 user).

This shim mirrors the names of `prosec.runtime.canonical` (`canonical_json`,
`sha256_token`, `token`) so the compiler can switch to the runtime's module by changing
the imports below and nothing else.
"""

from __future__ import annotations

import hashlib
from typing import Any

import rfc8785

TOKEN_PREFIX = "sha256:"


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 (JCS) bytes of a JSON value."""
    return rfc8785.dumps(value)


def sha256_token(data: bytes) -> str:
    """`sha256:<64 lowercase hex>` over raw bytes."""
    return TOKEN_PREFIX + hashlib.sha256(data).hexdigest()


def token(value: Any) -> str:
    """The token of a JSON value: sha256 over its canonical JSON."""
    return sha256_token(canonical_json(value))
