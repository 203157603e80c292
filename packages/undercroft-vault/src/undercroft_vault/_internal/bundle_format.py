"""Deterministic bundle assembly and parsing (no randomness, no KEM calls): the layer known answers pin."""

from __future__ import annotations

from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from nacl.bindings import (
    crypto_aead_xchacha20poly1305_ietf_decrypt,
    crypto_aead_xchacha20poly1305_ietf_encrypt,
    crypto_scalarmult,
    crypto_scalarmult_base,
)
from nacl.exceptions import CryptoError
from nacl.exceptions import RuntimeError as SodiumRuntimeError

__all__ = [
    "EPHEMERAL_LENGTH",
    "KEM_CIPHERTEXT_LENGTH",
    "MAGIC_V1",
    "MAGIC_V2",
    "NONCE_LENGTH",
    "BadBundle",
    "aead_open",
    "assemble_v1",
    "assemble_v2",
    "file_key_v1",
    "file_key_v2",
    "x25519",
]

MAGIC_V1 = b"UNDERCROFT-BUNDLE-1"
MAGIC_V2 = b"UNDERCROFT-BUNDLE-2"
EPHEMERAL_LENGTH = 32
KEM_CIPHERTEXT_LENGTH = 1088
NONCE_LENGTH = 24
_INFO_V1 = b"undercroft.v1/bundle"
_INFO_V2 = b"undercroft.v2/bundle"


class BadBundle(Exception):
    """Internal signal: the bundle does not open (mapped to the public integrity error by the caller)."""


def x25519(secret: bytes, public: bytes) -> bytes:
    """The X25519 shared secret; a low-order public key (all-zero output) is refused."""
    try:
        return crypto_scalarmult(secret, public)
    except SodiumRuntimeError:
        raise BadBundle("X25519 public key is of low order") from None


def _hkdf(salt: bytes, ikm: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=SHA256(), length=32, salt=salt, info=info).derive(ikm)


def file_key_v1(shared: bytes, eph_pub: bytes, recipient_x: bytes) -> bytes:
    """v1: HKDF-SHA256(salt = eph_pub ‖ recipient_pub, ikm = DH, info = "undercroft.v1/bundle")."""
    return _hkdf(eph_pub + recipient_x, shared, _INFO_V1)


def file_key_v2(shared: bytes, kem_shared: bytes, eph_pub: bytes, recipient_x: bytes) -> bytes:
    """v2: HKDF-SHA256(salt = eph_pub ‖ recipient_x_pub, ikm = DH ‖ kem_shared, info = "undercroft.v2/bundle")."""
    return _hkdf(eph_pub + recipient_x, shared + kem_shared, _INFO_V2)


def assemble_v1(eph_secret: bytes, nonce: bytes, recipient_x: bytes, payload: bytes) -> bytes:
    """``MAGIC_V1 ‖ eph_pub (32) ‖ nonce (24) ‖ ciphertext``, AAD = magic ‖ eph_pub."""
    eph_pub = crypto_scalarmult_base(eph_secret)
    key = file_key_v1(x25519(eph_secret, recipient_x), eph_pub, recipient_x)
    header = MAGIC_V1 + eph_pub
    return header + nonce + crypto_aead_xchacha20poly1305_ietf_encrypt(payload, header, nonce, key)


def assemble_v2(
    eph_secret: bytes, kem_ct: bytes, kem_shared: bytes, nonce: bytes, recipient_x: bytes, payload: bytes
) -> bytes:
    """``MAGIC_V2 ‖ eph_pub (32) ‖ mlkem_ct (1088) ‖ nonce (24) ‖ ciphertext``, AAD = magic ‖ eph_pub ‖ mlkem_ct."""
    eph_pub = crypto_scalarmult_base(eph_secret)
    key = file_key_v2(x25519(eph_secret, recipient_x), kem_shared, eph_pub, recipient_x)
    header = MAGIC_V2 + eph_pub + kem_ct
    return header + nonce + crypto_aead_xchacha20poly1305_ietf_encrypt(payload, header, nonce, key)


def aead_open(header: bytes, nonce: bytes, ciphertext: bytes, key: bytes) -> bytes:
    """Decrypt a bundle body with its header as AAD; `BadBundle` if anything was altered."""
    try:
        return crypto_aead_xchacha20poly1305_ietf_decrypt(ciphertext, header, nonce, key)
    except CryptoError:
        raise BadBundle("bundle does not authenticate") from None
