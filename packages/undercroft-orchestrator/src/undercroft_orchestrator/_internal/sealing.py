"""The control plane's keys: engine credentials sealed at rest, tenant tokens kept only as keyed MACs.

Every key is derived from ``UNDERCROFT_ORCH_KEY`` with HMAC-SHA256 under a distinct label, so the sealing key,
the token MAC key and the row MAC key never coincide. Credentials are sealed with XChaCha20-Poly1305 and the
instance's name and URL as associated data: a sealed blob copied to another row, or a row whose URL was edited
to point elsewhere, fails to open instead of handing the engine bearer to a different host.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets

import nacl.bindings as aead
import nacl.exceptions

from undercroft_orchestrator.errors import StateError

__all__ = ["Keys", "generate_key", "generate_token"]

_NONCE = aead.crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
_TOKEN_PREFIX = "uct_"  # noqa: S105 - a marker that makes a leaked token greppable, not a secret


def generate_key() -> str:
    """A fresh sealing key: 32 random bytes, URL-safe base64 (what ``keygen`` prints)."""
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).decode().rstrip("=")


def generate_token() -> str:
    """A fresh tenant or admin bearer: ``uct_`` and 43 URL-safe characters (256 bits)."""
    return _TOKEN_PREFIX + secrets.token_urlsafe(32)


class Keys:
    """The keys derived from one ``UNDERCROFT_ORCH_KEY``; the key itself is not kept."""

    def __init__(self, key: str) -> None:
        """Derive the sealing, token and row keys and the check value from ``key``."""
        material = key.encode("utf-8")
        self._seal = self._derive(material, "seal")
        self._token = self._derive(material, "token")
        self._row = self._derive(material, "row")
        self.check = self._derive(material, "check").hex()

    @staticmethod
    def _derive(material: bytes, label: str) -> bytes:
        return hmac.new(material, f"undercroft.orch/v1/{label}".encode(), hashlib.sha256).digest()

    def token_mac(self, token: str) -> str:
        """The keyed MAC a tenant token is stored as (the token itself is never stored)."""
        return hmac.new(self._token, token.encode("utf-8"), hashlib.sha256).hexdigest()

    def row_mac(self, *fields: str) -> str:
        """A MAC over one state row's fields, so an edited mapping is detected rather than followed."""
        joined = "\x1f".join(fields).encode("utf-8")
        return hmac.new(self._row, joined, hashlib.sha256).hexdigest()

    def seal(self, credentials: dict[str, str | None], *, name: str, url: str) -> bytes:
        """``credentials`` sealed, bound to the instance's ``name`` and ``url``."""
        nonce = secrets.token_bytes(_NONCE)
        plain = json.dumps(credentials, sort_keys=True).encode("utf-8")
        bound = f"instance\x1f{name}\x1f{url}".encode()
        return nonce + aead.crypto_aead_xchacha20poly1305_ietf_encrypt(plain, bound, nonce, self._seal)

    def open(self, sealed: bytes, *, name: str, url: str) -> dict[str, str | None]:
        """The credentials ``seal`` bound to ``name`` and ``url``; `StateError` when they do not open."""
        bound = f"instance\x1f{name}\x1f{url}".encode()
        try:
            plain = aead.crypto_aead_xchacha20poly1305_ietf_decrypt(sealed[_NONCE:], bound, sealed[:_NONCE], self._seal)
        except (nacl.exceptions.CryptoError, ValueError, TypeError):
            raise StateError(
                f"the sealed credentials of instance {name!r} do not open: the row was edited, moved or sealed "
                "under another UNDERCROFT_ORCH_KEY"
            ) from None
        decoded: dict[str, str | None] = json.loads(plain)
        return decoded
