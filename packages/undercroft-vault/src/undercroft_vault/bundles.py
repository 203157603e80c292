"""Export bundles: v2 hybrid (X25519 + ML-KEM-768) for ``pq1`` recipients, v1 (X25519) for legacy ones.

The version follows the recipient and nothing else: a hybrid recipient always receives v2, a legacy
recipient v1. Opening: a hybrid identity opens v2, and an old v1 with its curve half (reported as
version 1); an X25519-only identity handed a v2 gets `BundleRefused`. Any spliced header, swapped
encapsulation or rewritten magic fails to authenticate (`BundleOpenFailed`). Layouts in docs/vault.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from nacl.bindings import crypto_scalarmult_base
from pqcrypto.kem import ml_kem_768

from undercroft_vault._internal import bundle_format as fmt
from undercroft_vault.errors import BundleOpenFailed, BundleRefused
from undercroft_vault.recipients import Identity, Recipient

__all__ = ["MAGIC_V1", "MAGIC_V2", "OpenedBundle", "bundle_version", "open_bundle", "seal_bundle"]

MAGIC_V1 = fmt.MAGIC_V1
MAGIC_V2 = fmt.MAGIC_V2
_V1_MIN = len(MAGIC_V1) + fmt.EPHEMERAL_LENGTH + fmt.NONCE_LENGTH + 16
_V2_MIN = len(MAGIC_V2) + fmt.EPHEMERAL_LENGTH + fmt.KEM_CIPHERTEXT_LENGTH + fmt.NONCE_LENGTH + 16


@dataclass(frozen=True)
class OpenedBundle:
    """A bundle's plaintext payload and the format version it arrived in (1 = legacy, 2 = hybrid)."""

    payload: bytes
    version: int


def seal_bundle(recipient: Recipient, payload: bytes, *, random_bytes: Callable[[int], bytes] = os.urandom) -> bytes:
    """Seal `payload` to `recipient`: v2 for a hybrid recipient, v1 for a legacy one. No other choice."""
    eph_secret = random_bytes(fmt.EPHEMERAL_LENGTH)
    nonce = random_bytes(fmt.NONCE_LENGTH)
    try:
        if recipient.mlkem is None:
            return fmt.assemble_v1(eph_secret, nonce, recipient.x25519, payload)
        kem_ct, kem_shared = ml_kem_768.encaps(recipient.mlkem)
        return fmt.assemble_v2(eph_secret, bytes(kem_ct), bytes(kem_shared), nonce, recipient.x25519, payload)
    except fmt.BadBundle as exc:
        raise BundleRefused(f"cannot seal to this recipient: {exc}") from None


def bundle_version(bundle: bytes) -> int:
    """1 or 2 from the magic; `BundleOpenFailed` when it is not an Undercroft bundle."""
    if bundle.startswith(MAGIC_V2):
        return 2
    if bundle.startswith(MAGIC_V1):
        return 1
    raise BundleOpenFailed("not an Undercroft bundle: the magic is neither UNDERCROFT-BUNDLE-1 nor -2")


def open_bundle(identity: Identity, bundle: bytes) -> OpenedBundle:
    """Open `bundle` with `identity`, following the compatibility matrix in the module docstring."""
    version = bundle_version(bundle)
    x_secret = identity.x25519.reveal()
    x_pub = crypto_scalarmult_base(x_secret)
    try:
        if version == 1:
            return OpenedBundle(_open_v1(x_secret, x_pub, bundle), 1)
        if identity.mlkem is None:
            raise BundleRefused(
                "this identity is X25519-only (legacy) and the bundle is v2 (hybrid X25519 + ML-KEM-768): "
                "open it with the pq1sk identity it was sealed to"
            )
        return OpenedBundle(_open_v2(x_secret, x_pub, identity.mlkem.reveal(), bundle), 2)
    except fmt.BadBundle as exc:
        raise BundleOpenFailed(f"v{version} bundle does not open with this identity: {exc}") from None


def _open_v1(x_secret: bytes, x_pub: bytes, bundle: bytes) -> bytes:
    if len(bundle) < _V1_MIN:
        raise fmt.BadBundle(f"truncated: {len(bundle)} bytes, a v1 bundle needs at least {_V1_MIN}")
    cursor = len(MAGIC_V1)
    eph_pub = bundle[cursor : cursor + fmt.EPHEMERAL_LENGTH]
    cursor += fmt.EPHEMERAL_LENGTH
    nonce = bundle[cursor : cursor + fmt.NONCE_LENGTH]
    key = fmt.file_key_v1(fmt.x25519(x_secret, eph_pub), eph_pub, x_pub)
    return fmt.aead_open(bundle[:cursor], nonce, bundle[cursor + fmt.NONCE_LENGTH :], key)


def _open_v2(x_secret: bytes, x_pub: bytes, kem_secret: bytes, bundle: bytes) -> bytes:
    if len(bundle) < _V2_MIN:
        raise fmt.BadBundle(f"truncated: {len(bundle)} bytes, a v2 bundle needs at least {_V2_MIN}")
    cursor = len(MAGIC_V2)
    eph_pub = bundle[cursor : cursor + fmt.EPHEMERAL_LENGTH]
    cursor += fmt.EPHEMERAL_LENGTH
    kem_ct = bundle[cursor : cursor + fmt.KEM_CIPHERTEXT_LENGTH]
    cursor += fmt.KEM_CIPHERTEXT_LENGTH
    nonce = bundle[cursor : cursor + fmt.NONCE_LENGTH]
    # ML-KEM rejects implicitly: a swapped encapsulation yields an unrelated secret, so the AEAD fails.
    kem_shared = bytes(ml_kem_768.decaps(kem_secret, kem_ct))
    key = fmt.file_key_v2(fmt.x25519(x_secret, eph_pub), kem_shared, eph_pub, x_pub)
    return fmt.aead_open(bundle[:cursor], nonce, bundle[cursor + fmt.NONCE_LENGTH :], key)
