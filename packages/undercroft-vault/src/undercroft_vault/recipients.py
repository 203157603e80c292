"""Bundle identities: hybrid X25519 + ML-KEM-768 (``pq1``) by default, legacy bare-hex X25519 still parsed.

String forms (lower-case hex):

* hybrid recipient (public): ``pq1`` ‖ hex(x25519_pub (32) ‖ mlkem768_pub (1184));
* hybrid identity (secret): ``pq1sk`` ‖ hex(x25519_secret (32) ‖ mlkem768_secret (2400));
* legacy recipient and legacy identity: 64 hex characters (the X25519 public or secret key).

A legacy string is read as a recipient or as an identity by the argument it is passed to, exactly as the
original tool reads ``--to`` and ``--identity``.
"""

from __future__ import annotations

from dataclasses import dataclass

from nacl.bindings import crypto_scalarmult_base
from pqcrypto.kem import ml_kem_768

from undercroft_vault.errors import InvalidVaultInput
from undercroft_vault.keymaterial import SecretBytes

__all__ = [
    "HYBRID_PREFIX",
    "HYBRID_SECRET_PREFIX",
    "MLKEM_PUBLIC_LENGTH",
    "MLKEM_SECRET_LENGTH",
    "X25519_LENGTH",
    "Identity",
    "Recipient",
    "generate_identity",
    "parse_identity",
    "parse_recipient",
]

HYBRID_PREFIX = "pq1"
HYBRID_SECRET_PREFIX = "pq1sk"  # noqa: S105 - a format prefix, not a secret
X25519_LENGTH = 32
MLKEM_PUBLIC_LENGTH = 1184
MLKEM_SECRET_LENGTH = 2400
_MLKEM_PUBLIC_OFFSET = 1152  # FIPS 203: the decapsulation key embeds the encapsulation key here


@dataclass(frozen=True)
class Recipient:
    """Who a bundle is sealed to. `mlkem` is None for a legacy (X25519-only) recipient."""

    x25519: bytes
    mlkem: bytes | None

    @property
    def hybrid(self) -> bool:
        """True for a ``pq1`` recipient (always receives a v2 bundle)."""
        return self.mlkem is not None

    def encode(self) -> str:
        """The recipient's string form (``pq1…`` or 64 hex characters)."""
        if self.mlkem is None:
            return self.x25519.hex()
        return HYBRID_PREFIX + (self.x25519 + self.mlkem).hex()


@dataclass(frozen=True)
class Identity:
    """The secret half: opens bundles sealed to its `recipient()`. Wipe when done."""

    x25519: SecretBytes
    mlkem: SecretBytes | None

    @property
    def hybrid(self) -> bool:
        """True for a ``pq1sk`` identity (opens v2, and v1 with its curve half)."""
        return self.mlkem is not None

    def recipient(self) -> Recipient:
        """The public recipient this identity answers to."""
        x_pub = crypto_scalarmult_base(self.x25519.reveal())
        if self.mlkem is None:
            return Recipient(x_pub, None)
        secret = self.mlkem.reveal()
        return Recipient(x_pub, secret[_MLKEM_PUBLIC_OFFSET : _MLKEM_PUBLIC_OFFSET + MLKEM_PUBLIC_LENGTH])

    def encode(self) -> str:
        """The identity's secret string form — write it only to a 0600 file."""
        if self.mlkem is None:
            return self.x25519.reveal().hex()
        return HYBRID_SECRET_PREFIX + (self.x25519.reveal() + self.mlkem.reveal()).hex()

    def wipe(self) -> None:
        """Zero both secret halves."""
        self.x25519.wipe()
        if self.mlkem is not None:
            self.mlkem.wipe()


def generate_identity(*, hybrid: bool = True) -> Identity:
    """A new identity: hybrid X25519 + ML-KEM-768 unless `hybrid=False` asks for a legacy one."""
    from nacl.public import PrivateKey

    x_secret = SecretBytes(bytes(PrivateKey.generate()), expected_length=X25519_LENGTH)
    if not hybrid:
        return Identity(x_secret, None)
    _public, secret = ml_kem_768.keygen()
    return Identity(x_secret, SecretBytes(bytes(secret), expected_length=MLKEM_SECRET_LENGTH))


def parse_recipient(text: str) -> Recipient:
    """Parse a ``pq1…`` hybrid or 64-hex legacy recipient; refuses a secret passed by mistake."""
    text = text.strip()
    if text.startswith(HYBRID_SECRET_PREFIX):
        raise InvalidVaultInput("this is a secret identity (pq1sk…), not a recipient: pass its public form")
    if text.startswith(HYBRID_PREFIX):
        raw = _hex(text[len(HYBRID_PREFIX) :], X25519_LENGTH + MLKEM_PUBLIC_LENGTH, "pq1 recipient")
        return Recipient(raw[:X25519_LENGTH], raw[X25519_LENGTH:])
    return Recipient(_hex(text, X25519_LENGTH, "legacy X25519 recipient"), None)


def parse_identity(text: str) -> Identity:
    """Parse a ``pq1sk…`` hybrid or 64-hex legacy identity (secret key string)."""
    text = text.strip()
    if text.startswith(HYBRID_SECRET_PREFIX):
        raw = bytearray(_hex(text[len(HYBRID_SECRET_PREFIX) :], X25519_LENGTH + MLKEM_SECRET_LENGTH, "pq1sk identity"))
        try:
            return Identity(SecretBytes(raw[:X25519_LENGTH]), SecretBytes(raw[X25519_LENGTH:]))
        finally:
            raw[:] = bytes(len(raw))
    if text.startswith(HYBRID_PREFIX):
        raise InvalidVaultInput("this is a public recipient (pq1…), not an identity: pass the pq1sk… secret")
    return Identity(SecretBytes(_hex(text, X25519_LENGTH, "legacy X25519 identity")), None)


def _hex(text: str, length: int, what: str) -> bytes:
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raise InvalidVaultInput(f"{what} is not hex") from None
    if len(raw) != length:
        raise InvalidVaultInput(f"{what} must encode {length} bytes ({2 * length} hex characters), got {len(raw)}")
    return raw
