"""The per-vault blind-index secret: 32 random bytes, stored sealed, re-sealed on rotation, never re-derived.

Blind values (truncated HMAC under this secret) stand in for words that need SQL equality — knowledge-graph
subjects, predicates and entity names, and the ids derived from them. The secret is deliberately separate
from the rotatable working keys: an id that moved on rotation would orphan the audit records and receipts
that reference it. A rotation opens the sealed secret under the old keys and seals it under the new ones.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Callable

from undercroft_vault._internal.encoding import lp
from undercroft_vault.domains import Domain
from undercroft_vault.errors import InvalidVaultInput, OpenFailed
from undercroft_vault.keymaterial import SecretBytes
from undercroft_vault.sealing import Sealer

__all__ = ["BLIND_LENGTH", "BLIND_SECRET_DOMAIN", "BLIND_SECRET_LENGTH", "BlindIndex"]

BLIND_SECRET_LENGTH = 32
#: Bytes of HMAC kept in a blind value (hex-encoded to twice as many characters).
BLIND_LENGTH = 16
#: The domain the secret is sealed under inside its vault.
BLIND_SECRET_DOMAIN = Domain.vault_secret("blind-index")
_BLIND_TAG = b"undercroft.blind.v1\x00"
_PROVENANCE_TAG = b"undercroft.provenance-fp.v1\x00"
_DRAWER_ID_KEY_TAG = b"undercroft.drawer-id-key.v1\x00"


class BlindIndex:
    """Holds a vault's blind-index secret and computes blind values and provenance fingerprints."""

    __slots__ = ("_secret",)

    def __init__(self, secret: SecretBytes) -> None:
        """Wrap an existing 32-byte secret (use `generate` or `open_sealed` to obtain one)."""
        if len(secret) != BLIND_SECRET_LENGTH:
            raise InvalidVaultInput(f"blind-index secret must be {BLIND_SECRET_LENGTH} bytes, got {len(secret)}")
        self._secret = secret

    @classmethod
    def generate(cls, random_bytes: Callable[[int], bytes] = os.urandom) -> BlindIndex:
        """Draw a fresh secret: once, at vault creation."""
        return cls(SecretBytes(random_bytes(BLIND_SECRET_LENGTH), expected_length=BLIND_SECRET_LENGTH))

    @classmethod
    def open_sealed(cls, sealer: Sealer, sealed: bytes) -> BlindIndex:
        """Open the stored sealed secret with the vault's current keys."""
        material = bytearray(sealer.open(BLIND_SECRET_DOMAIN, sealed))
        try:
            if len(material) != BLIND_SECRET_LENGTH:
                raise OpenFailed(f"sealed blind-index secret holds {len(material)} bytes, not {BLIND_SECRET_LENGTH}")
            return cls(SecretBytes(material))
        finally:
            material[:] = bytes(len(material))

    def seal(self, sealer: Sealer) -> bytes:
        """The secret sealed for storage in `sealer`'s vault (at creation, and again on every rotation)."""
        return sealer.seal(BLIND_SECRET_DOMAIN, self._secret.reveal())

    def reseal(self, sealed: bytes, old: Sealer, new: Sealer) -> bytes:
        """Rotation helper: check `sealed` opens under `old` to this very secret, then seal it under `new`."""
        if BlindIndex.open_sealed(old, sealed)._secret != self._secret:
            raise OpenFailed("the stored blind-index secret differs from the one held; refusing to re-seal")
        return self.seal(new)

    def blind(self, kind: str, value: str) -> str:
        """The hex blind value of `value` within `kind` (e.g. ``"subject"``, ``"entity"``): 32 hex chars."""
        if not kind:
            raise InvalidVaultInput("blind kind must not be empty")
        message = _BLIND_TAG + lp(kind.encode("utf-8")) + lp(value.encode("utf-8"))
        return hmac.digest(self._secret.buffer(), message, "sha256")[:BLIND_LENGTH].hex()

    def provenance_fingerprint(self, data: bytes) -> bytes:
        """A 16-byte keyed fingerprint that must survive rotation (e.g. supersedes / source fingerprints)."""
        return hmac.digest(self._secret.buffer(), _PROVENANCE_TAG + data, "sha256")[:BLIND_LENGTH]

    def drawer_id_key(self) -> bytes:
        """The 32-byte key of the vault's keyed drawer-id recipe (``hmac-v1``): HMAC-SHA256 of a fixed tag
        under the secret, so it is as stable as the secret (ids never move on rotation) and separate from
        every blind value and fingerprint."""
        return hmac.digest(self._secret.buffer(), _DRAWER_ID_KEY_TAG, "sha256")

    def export_secret(self) -> bytes:
        """The raw secret, to carry it to a copy of its vault (``undercroft_store.kernel.id_key``): whoever holds
        it computes this vault's blind values and keyed ids, so it travels only inside an export."""
        return self._secret.reveal()

    def wipe(self) -> None:
        """Zero the secret buffer."""
        self._secret.wipe()
