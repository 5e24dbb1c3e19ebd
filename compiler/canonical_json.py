"""RFC 8785 canonical JSON and sha256 tokens for the compiler (the one rfc8785 user).

This shim mirrors the names of `prosec.runtime.canonical` (`canonical_json`,
`sha256_token`, `token`) so the compiler can switch to the runtime's module by changing
the imports below and nothing else. Contract images hold only strings, integers,
booleans, null, lists and objects, so the C JSON encoder produces the RFC 8785 bytes
whenever no float, no integer beyond 2**53 and no character outside the Basic
Multilingual Plane (which would sort differently in UTF-16) occurs; anything else takes
the exact `rfc8785` path.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import rfc8785

TOKEN_PREFIX = "sha256:"
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_SAFE_INT = 2**53


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 (JCS) bytes of a JSON value."""
    if _plain(value):
        text = _ENCODER.encode(value)
        if not _ASTRAL.search(text):
            try:
                return text.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate
                pass
    return rfc8785.dumps(value)


def _plain(value: Any) -> bool:
    """Only types whose C-encoder form is already canonical."""
    if value is None or isinstance(value, (str, bool)):
        return True
    if isinstance(value, int):
        return -_SAFE_INT <= value <= _SAFE_INT
    if isinstance(value, list):
        return all(_plain(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def sha256_token(data: bytes) -> str:
    """`sha256:<64 lowercase hex>` over raw bytes."""
    return TOKEN_PREFIX + hashlib.sha256(data).hexdigest()


def token(value: Any) -> str:
    """The token of a JSON value: sha256 over its canonical JSON."""
    return sha256_token(canonical_json(value))
