"""prosec.runtime: canonical JSON, content addresses, receipts, state and the reconciler.

Only the dependency-free canonical layer is re-exported here, so `import prosec.runtime`
stays cheap for the compiler; the rest lives in its modules (session, serve, executor…).
The runtime is a library: its commands live in prosec.compiler.commands, so it imports
neither click nor rich.
"""

from .canonical import (
    CanonicalError,
    PathError,
    canonical_json,
    content_address,
    decode_frame,
    encode_frame,
    normalize_path,
    sha256_token,
    token,
)

__all__ = [
    "CanonicalError",
    "PathError",
    "canonical_json",
    "content_address",
    "decode_frame",
    "encode_frame",
    "normalize_path",
    "sha256_token",
    "token",
]
