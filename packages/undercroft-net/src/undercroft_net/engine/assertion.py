"""The per-vault request assertion: ``X-Vault-Assertion: <unix_ts>:<hex HMAC-SHA256(secret, "<ts>|<vault>")>``.

One implementation for the engine that checks it and every client that mints it (the typed client here, the
orchestrator, ``undercroft assert-header``), so the two sides cannot disagree on a byte.
"""

from __future__ import annotations

import hashlib
import hmac

__all__ = ["ASSERTION_HEADER", "assertion_mac", "mint_assertion"]

ASSERTION_HEADER = "X-Vault-Assertion"


def assertion_mac(secret: str, timestamp: str, vault: str) -> str:
    """The hex HMAC-SHA256 of ``"<timestamp>|<vault>"`` under ``secret``: the vault id is inside the MAC."""
    return hmac.new(secret.encode("utf-8"), f"{timestamp}|{vault}".encode(), hashlib.sha256).hexdigest()


def mint_assertion(secret: str, vault: str, now: float) -> str:
    """The header value authorising a request for ``vault`` at unix time ``now`` (valid ±120 s)."""
    timestamp = str(int(now))
    return f"{timestamp}:{assertion_mac(secret, timestamp, vault)}"
