"""The two gates of serve-http: the palace bearer and the per-vault assertion.

The bearer (``UNDERCROFT_MCP_HTTP_TOKEN``) proves the caller reached the right server; the assertion
(``UNDERCROFT_ASSERTION_SECRET``) proves a platform authorised this request for one vault:
``X-Vault-Assertion: <unix_ts>:<hex HMAC-SHA256(secret, "<unix_ts>|<vault_id>")>``, valid ±120 s. Both
comparisons are constant-time. A failure is never explained to the caller (every 401 has one body); the
reason is returned to the server, which logs it. The MAC itself is `undercroft_net.engine.assertion`'s, the
one implementation every client mints with.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from undercroft_net.engine.assertion import assertion_mac, mint_assertion

__all__ = [
    "ASSERTION_HEADER",
    "ASSERTION_WINDOW_SECONDS",
    "Gate",
    "mint_assertion",
]

ASSERTION_HEADER = "x-vault-assertion"
ASSERTION_WINDOW_SECONDS = 120


@dataclass(frozen=True)
class Gate:
    """The process's credentials: a bearer (``None`` only on a loopback bind) and an optional assertion secret."""

    bearer: str | None
    assertion_secret: str | None

    def bearer_refusal(self, authorization: str | None) -> str | None:
        """Why the ``Authorization`` header fails the bearer (``None`` when it passes or no bearer is set)."""
        if self.bearer is None:
            return None
        if authorization is None:
            return "no Authorization header"
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token:
            return "Authorization is not a Bearer credential"
        if not hmac.compare_digest(token.encode("utf-8"), self.bearer.encode("utf-8")):
            return "wrong bearer token"
        return None

    def assertion_refusal(self, header: str | None, vault: str, now: float) -> str | None:
        """Why ``header`` fails to authorise ``vault`` at ``now`` (``None`` when it passes or assertions are off)."""
        if self.assertion_secret is None:
            return None
        if header is None:
            return "no X-Vault-Assertion header"
        timestamp, colon, mac = header.strip().partition(":")
        if not colon or not timestamp.isascii() or not timestamp.isdigit() or len(timestamp) > 12:
            return "X-Vault-Assertion is not <unix_ts>:<hex>"
        if abs(now - int(timestamp)) > ASSERTION_WINDOW_SECONDS:
            return f"assertion timestamp outside ±{ASSERTION_WINDOW_SECONDS} s"
        expected = assertion_mac(self.assertion_secret, timestamp, vault)
        if not hmac.compare_digest(mac.lower().encode("ascii", "replace"), expected.encode("ascii")):
            return "assertion MAC does not match this vault"
        return None
