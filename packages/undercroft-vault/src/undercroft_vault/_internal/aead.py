"""XChaCha20-Poly1305 of many small blobs in one call: decryption (`Sealer.open_many`), encryption (`Sealer.seal_many`).

PyNaCl's public `crypto_aead_xchacha20poly1305_ietf_decrypt` re-checks six argument types and allocates a
fresh output buffer on every call, which costs several times libsodium's own work for a 300-byte blob. This
module calls the same libsodium function through PyNaCl's cffi binding (`nacl._sodium`), reusing one output
buffer for a whole batch; the result is byte-identical (tests compare it with the public binding). Where that
binding cannot be imported the public one serves, one call per blob.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from nacl.bindings import crypto_aead_xchacha20poly1305_ietf_decrypt, crypto_aead_xchacha20poly1305_ietf_encrypt
from nacl.exceptions import CryptoError

try:  # PyNaCl's own binding of libsodium: private, so the public call stays the fallback
    from nacl._sodium import ffi as _ffi
    from nacl._sodium import lib as _lib
except ImportError:  # pragma: no cover - every PyNaCl release since 1.0 ships it
    _ffi = _lib = None

__all__ = ["TAG_LENGTH", "decrypt_many", "encrypt_many"]

#: Poly1305 tag bytes at the end of every ciphertext.
TAG_LENGTH = 16


def decrypt_many(
    key: bytes, items: Sequence[tuple[bytes, bytes, bytes]], *, direct: bool = True
) -> Iterator[bytes | None]:
    """Decrypt each ``(ciphertext, aad, nonce)`` under ``key``, in order; None for one that fails.

    ``direct`` False forces the public binding (the tests' reference path)."""
    if not direct or _lib is None or _ffi is None:
        for ciphertext, aad, nonce in items:
            try:
                yield crypto_aead_xchacha20poly1305_ietf_decrypt(ciphertext, aad, nonce, key)
            except CryptoError:
                yield None
        return
    if len(key) != 32:
        raise ValueError("an XChaCha20-Poly1305 key is 32 bytes")
    largest = max((len(ciphertext) for ciphertext, _, _ in items), default=0)
    out = _ffi.new("unsigned char[]", max(1, largest))
    written = _ffi.new("unsigned long long *")
    decrypt = _lib.crypto_aead_xchacha20poly1305_ietf_decrypt
    for ciphertext, aad, nonce in items:
        if len(nonce) != 24 or len(ciphertext) < TAG_LENGTH:
            yield None
            continue
        status = decrypt(out, written, _ffi.NULL, ciphertext, len(ciphertext), aad, len(aad), nonce, key)
        yield _ffi.buffer(out, written[0])[:] if status == 0 else None


def encrypt_many(key: bytes, items: Sequence[tuple[bytes, bytes, bytes]], *, direct: bool = True) -> list[bytes]:
    """Encrypt each ``(plaintext, aad, nonce)`` under ``key``, in order: ciphertext ‖ tag, byte-identical to the
    public binding (a write's batch seals three blobs per drawer; the public call's checks cost more than them).

    ``direct`` False forces the public binding (the tests' reference path)."""
    if not direct or _lib is None or _ffi is None:
        return [crypto_aead_xchacha20poly1305_ietf_encrypt(plain, aad, nonce, key) for plain, aad, nonce in items]
    if len(key) != 32:
        raise ValueError("an XChaCha20-Poly1305 key is 32 bytes")
    largest = max((len(plain) for plain, _, _ in items), default=0)
    out = _ffi.new("unsigned char[]", largest + TAG_LENGTH)
    written = _ffi.new("unsigned long long *")
    encrypt = _lib.crypto_aead_xchacha20poly1305_ietf_encrypt
    sealed: list[bytes] = []
    for plain, aad, nonce in items:
        if len(nonce) != 24:
            raise ValueError("an XChaCha20-Poly1305 nonce is 24 bytes")
        if encrypt(out, written, plain, len(plain), aad, len(aad), _ffi.NULL, nonce, key) != 0:
            raise RuntimeError("libsodium refused to encrypt")  # pragma: no cover - it fails only on misuse
        sealed.append(_ffi.buffer(out, written[0])[:])
    return sealed
