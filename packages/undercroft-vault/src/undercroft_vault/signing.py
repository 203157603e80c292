"""Signing identities: Ed25519 (legacy) or hybrid Ed25519 + ML-DSA-65 (``pqs1``, default for new ones).

String forms (lower-case hex):

* legacy sender (public): 64 hex (the Ed25519 verify key); legacy secret: 64 hex (the Ed25519 seed);
* hybrid sender: ``pqs1`` ‖ hex(ed25519_pub (32) ‖ mldsa65_pub (1952));
* hybrid secret: ``pqs1sk`` ‖ hex(ed25519_seed (32) ‖ mldsa65_secret (4032) ‖ mldsa65_pub (1952)) — the
  ML-DSA secret key does not embed its public key, so the string carries it.
"""

from __future__ import annotations

from dataclasses import dataclass

from nacl.signing import SigningKey
from pqcrypto.sign import ml_dsa_65

from undercroft_vault.errors import InvalidVaultInput
from undercroft_vault.keymaterial import SecretBytes

__all__ = [
    "ED25519_LENGTH",
    "MLDSA_PUBLIC_LENGTH",
    "MLDSA_SECRET_LENGTH",
    "MLDSA_SIGNATURE_LENGTH",
    "SENDER_PREFIX",
    "SENDER_SECRET_PREFIX",
    "Sender",
    "SigningIdentity",
    "generate_signing_identity",
    "parse_sender",
    "parse_signing_identity",
]

SENDER_PREFIX = "pqs1"
SENDER_SECRET_PREFIX = "pqs1sk"  # noqa: S105 - a format prefix, not a secret
ED25519_LENGTH = 32
MLDSA_PUBLIC_LENGTH = 1952
MLDSA_SECRET_LENGTH = 4032
MLDSA_SIGNATURE_LENGTH = 3309


@dataclass(frozen=True)
class Sender:
    """A sender's public key(s). `mldsa` is None for a legacy Ed25519-only sender."""

    ed25519: bytes
    mldsa: bytes | None

    @property
    def hybrid(self) -> bool:
        """True for a ``pqs1`` sender: both halves must verify."""
        return self.mldsa is not None

    def encode(self) -> str:
        """The sender's string form, as pinned with ``--sender``."""
        if self.mldsa is None:
            return self.ed25519.hex()
        return SENDER_PREFIX + (self.ed25519 + self.mldsa).hex()


@dataclass(frozen=True)
class SigningIdentity:
    """The secret half of a sender. Wipe when done."""

    ed25519_seed: SecretBytes
    mldsa_secret: SecretBytes | None
    mldsa_public: bytes | None

    @property
    def hybrid(self) -> bool:
        """True for a hybrid Ed25519 + ML-DSA-65 identity."""
        return self.mldsa_secret is not None

    def sender(self) -> Sender:
        """The public sender this identity signs as."""
        verify_key = bytes(SigningKey(self.ed25519_seed.reveal()).verify_key)
        return Sender(verify_key, self.mldsa_public if self.hybrid else None)

    def encode(self) -> str:
        """The secret string form — write it only to a 0600 file."""
        if self.mldsa_secret is None or self.mldsa_public is None:
            return self.ed25519_seed.reveal().hex()
        raw = self.ed25519_seed.reveal() + self.mldsa_secret.reveal() + self.mldsa_public
        return SENDER_SECRET_PREFIX + raw.hex()

    def wipe(self) -> None:
        """Zero the secret halves."""
        self.ed25519_seed.wipe()
        if self.mldsa_secret is not None:
            self.mldsa_secret.wipe()


def generate_signing_identity(*, hybrid: bool = True) -> SigningIdentity:
    """A new signing identity: hybrid unless `hybrid=False` asks for a legacy Ed25519 one."""
    seed = SecretBytes(bytes(SigningKey.generate()), expected_length=ED25519_LENGTH)
    if not hybrid:
        return SigningIdentity(seed, None, None)
    public, secret = ml_dsa_65.keygen()
    return SigningIdentity(seed, SecretBytes(bytes(secret), expected_length=MLDSA_SECRET_LENGTH), bytes(public))


def parse_sender(text: str) -> Sender:
    """Parse a ``pqs1…`` hybrid or 64-hex legacy sender; refuses a secret passed by mistake."""
    text = text.strip()
    if text.startswith(SENDER_SECRET_PREFIX):
        raise InvalidVaultInput("this is a secret signing identity (pqs1sk…), not a sender")
    if text.startswith(SENDER_PREFIX):
        raw = _hex(text[len(SENDER_PREFIX) :], ED25519_LENGTH + MLDSA_PUBLIC_LENGTH, "pqs1 sender")
        return Sender(raw[:ED25519_LENGTH], raw[ED25519_LENGTH:])
    return Sender(_hex(text, ED25519_LENGTH, "legacy Ed25519 sender"), None)


def parse_signing_identity(text: str) -> SigningIdentity:
    """Parse a ``pqs1sk…`` hybrid or 64-hex legacy signing identity."""
    text = text.strip()
    if text.startswith(SENDER_SECRET_PREFIX):
        total = ED25519_LENGTH + MLDSA_SECRET_LENGTH + MLDSA_PUBLIC_LENGTH
        raw = bytearray(_hex(text[len(SENDER_SECRET_PREFIX) :], total, "pqs1sk signing identity"))
        try:
            split = ED25519_LENGTH + MLDSA_SECRET_LENGTH
            return SigningIdentity(
                SecretBytes(raw[:ED25519_LENGTH]), SecretBytes(raw[ED25519_LENGTH:split]), bytes(raw[split:])
            )
        finally:
            raw[:] = bytes(len(raw))
    if text.startswith(SENDER_PREFIX):
        raise InvalidVaultInput("this is a public sender (pqs1…), not a signing identity")
    return SigningIdentity(SecretBytes(_hex(text, ED25519_LENGTH, "legacy Ed25519 signing identity")), None, None)


def _hex(text: str, length: int, what: str) -> bytes:
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raise InvalidVaultInput(f"{what} is not hex") from None
    if len(raw) != length:
        raise InvalidVaultInput(f"{what} must encode {length} bytes ({2 * length} hex characters), got {len(raw)}")
    return raw
