"""Who may call the server: a bearer token, or an HMAC signature of the body (webhooks).

Secrets come from the environment through the CLI and live only in this object: they
are never logged, printed, put in a response or in `repr`. Comparisons are constant
time. On 127.0.0.1 with no secret configured every request is allowed; anywhere else
the CLI refuses to start without one (`require_secret_for`).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["SIGNATURE_HEADERS", "Auth", "is_loopback", "sign"]

# the header prosec documents, and GitHub's name for the same HMAC-SHA256 signature
SIGNATURE_HEADERS = ("x-prosec-signature", "x-hub-signature-256")


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and `localhost`: only this machine can connect."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def sign(secret: str, body: bytes) -> str:
    """The signature header value of `body`: `sha256=` and the HMAC-SHA256 hex digest."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class Auth:
    """The configured secrets (either may be None); `open` when neither is set."""

    token: str | None = field(default=None, repr=False)
    webhook_secret: str | None = field(default=None, repr=False)

    @property
    def open(self) -> bool:
        return not self.token and not self.webhook_secret

    def bearer_ok(self, headers: Mapping[str, str]) -> bool:
        """The request carries `Authorization: Bearer <token>` with the right token."""
        if self.open:
            return True
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if not self.token or scheme.lower() != "bearer" or not given:
            return False
        return hmac.compare_digest(given.strip().encode(), self.token.encode())

    def signature_ok(self, headers: Mapping[str, str], body: bytes) -> bool:
        """The body is signed with the webhook secret in one of SIGNATURE_HEADERS."""
        if not self.webhook_secret:
            return False
        expected = sign(self.webhook_secret, body).encode()
        for name in SIGNATURE_HEADERS:
            given = headers.get(name)
            if given and hmac.compare_digest(given.strip().encode(), expected):
                return True
        return False

    def may_trigger(self, headers: Mapping[str, str]) -> bool:
        """Whether some body could authorize this trigger: a valid bearer token, or a
        signature header while a webhook secret is set. Checked before the body is read,
        so an unauthenticated caller learns nothing about the size limit and costs no read."""
        if self.bearer_ok(headers):
            return True
        return bool(self.webhook_secret) and any(headers.get(n) for n in SIGNATURE_HEADERS)

    def trigger_ok(self, headers: Mapping[str, str], body: bytes) -> bool:
        """A trigger may be authorized by the bearer token or by a body signature."""
        return self.bearer_ok(headers) or self.signature_ok(headers, body)
