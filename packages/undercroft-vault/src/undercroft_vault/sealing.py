"""Sealing: zstd (own frame) then XChaCha20-Poly1305 under the vault's enc key and a domain-bound AAD.

At-rest layout of a sealed blob::

    version (1 byte, 0x01) ‖ nonce (24) ‖ XChaCha20-Poly1305( mode (1) ‖ body , aad = AAD(domain) ‖ version )

`mode` is 0x00 for raw bytes (compression did not pay) or 0x01 for one zstd frame carrying its content
size; it travels inside the ciphertext, so it is authenticated and hidden. The decoder sizes its buffer
from the frame header and refuses any frame declaring more than 16 MiB.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from nacl.bindings import (
    crypto_aead_xchacha20poly1305_ietf_decrypt,
    crypto_aead_xchacha20poly1305_ietf_encrypt,
)
from nacl.exceptions import CryptoError

from undercroft_vault._internal import compression
from undercroft_vault._internal.aead import decrypt_many, encrypt_many
from undercroft_vault._internal.encoding import aad_prefix, lp
from undercroft_vault.domains import Domain
from undercroft_vault.errors import BatchOpenFailed, InvalidVaultInput, OpenFailed, SizeLimitExceeded
from undercroft_vault.names import validate_vault_id
from undercroft_vault.vaultkeys import VaultKeys

__all__ = ["MAX_PLAINTEXT_BYTES", "NONCE_LENGTH", "SEAL_OVERHEAD", "SEAL_VERSION", "Sealer"]

#: Hard bound on a sealed payload and on any frame the decoder will expand: 16 MiB.
MAX_PLAINTEXT_BYTES = 16 * 1024 * 1024
NONCE_LENGTH = 24
SEAL_VERSION = 1
#: Bytes a sealed blob adds beyond its (possibly compressed) body: version, nonce, mode, Poly1305 tag.
SEAL_OVERHEAD = 1 + NONCE_LENGTH + 1 + 16

_VERSION_BYTE = bytes((SEAL_VERSION,))
_MODE_RAW = 0
_MODE_ZSTD = 1
_MIN_COMPRESSIBLE = 32  # below this a zstd frame header alone outweighs any gain


class Sealer:
    """Seals and opens one vault's blobs. Holds its keys; randomness is injectable for known answers."""

    def __init__(self, keys: VaultKeys, *, random_bytes: Callable[[int], bytes] = os.urandom) -> None:
        """Bind to `keys` (and so to their vault id); `random_bytes` draws each 24-byte nonce."""
        self._keys = keys
        self._random = random_bytes
        self._aad_prefix = aad_prefix(validate_vault_id(keys.vault_id))

    @property
    def vault_id(self) -> str:
        """The vault whose id every AAD binds."""
        return self._keys.vault_id

    def aad(self, domain: Domain) -> bytes:
        """The exact associated data used for `domain` in this vault (equals `domain.aad(vault_id)`)."""
        return self._aad_prefix + bytes((int(domain.kind),)) + lp(domain.label.encode("utf-8"))

    def seal(self, domain: Domain, plaintext: bytes) -> bytes:
        """Compress (when it pays) and encrypt `plaintext` for `domain`; returns the at-rest bytes."""
        body, nonce = self._body(plaintext), self._nonce()
        ciphertext = crypto_aead_xchacha20poly1305_ietf_encrypt(
            body, self.aad(domain) + _VERSION_BYTE, nonce, self._keys.enc.reveal()
        )
        return _VERSION_BYTE + nonce + ciphertext

    def seal_many(self, domains: Sequence[Domain], plaintexts: Sequence[bytes]) -> list[bytes]:
        """`seal` over many payloads at once, each under its own domain and its own fresh nonce.

        The same at-rest bytes `seal` would give for the same nonces, with one libsodium call per blob and the
        key revealed once (a write batch's content, embedding and meta blobs pay libsodium's work, not the
        binding's). A payload over the bound refuses the whole batch before anything is sealed."""
        if len(domains) != len(plaintexts):
            raise InvalidVaultInput(f"seal_many got {len(domains)} domains for {len(plaintexts)} payloads")
        nonces: list[bytes] = []
        items: list[tuple[bytes, bytes, bytes]] = []
        for domain, plaintext in zip(domains, plaintexts, strict=True):
            nonce = self._nonce()
            nonces.append(nonce)
            items.append((self._body(plaintext), self.aad(domain) + _VERSION_BYTE, nonce))
        sealed = encrypt_many(self._keys.enc.reveal(), items)
        return [_VERSION_BYTE + nonce + ciphertext for nonce, ciphertext in zip(nonces, sealed, strict=True)]

    def _body(self, plaintext: bytes) -> bytes:
        """The mode byte and the payload: one zstd frame when it is smaller, else the raw bytes."""
        if len(plaintext) > MAX_PLAINTEXT_BYTES:
            raise SizeLimitExceeded(f"payload is {len(plaintext)} bytes; the sealing bound is {MAX_PLAINTEXT_BYTES}")
        if len(plaintext) >= _MIN_COMPRESSIBLE:
            frame = compression.compress(plaintext)
            if len(frame) < len(plaintext):
                return bytes((_MODE_ZSTD,)) + frame
        return bytes((_MODE_RAW,)) + plaintext

    def _nonce(self) -> bytes:
        nonce = self._random(NONCE_LENGTH)
        if len(nonce) != NONCE_LENGTH:
            raise InvalidVaultInput(f"random source returned {len(nonce)} bytes, wanted {NONCE_LENGTH}")
        return nonce

    def open(self, domain: Domain, sealed: bytes) -> bytes:
        """Decrypt and decompress a blob sealed for `domain` in this vault; `OpenFailed` otherwise."""
        if len(sealed) < SEAL_OVERHEAD:
            raise OpenFailed(f"sealed blob is {len(sealed)} bytes; shorter than the {SEAL_OVERHEAD}-byte minimum")
        if sealed[0] != SEAL_VERSION:
            raise OpenFailed(f"sealed blob has format version {sealed[0]}; only {SEAL_VERSION} is known")
        nonce = sealed[1 : 1 + NONCE_LENGTH]
        try:
            body = crypto_aead_xchacha20poly1305_ietf_decrypt(
                sealed[1 + NONCE_LENGTH :], self.aad(domain) + _VERSION_BYTE, nonce, self._keys.enc.reveal()
            )
        except CryptoError:
            raise OpenFailed(
                f"sealed blob does not open in vault {self.vault_id!r} as {domain.kind.name.lower()} "
                f"{domain.label!r}: wrong vault, record, domain or key, or altered bytes"
            ) from None
        return _unframe(body)

    def open_many(self, domains: Sequence[Domain], sealed: Sequence[bytes]) -> list[bytes]:
        """`open` over many blobs at once, each under its own domain; all or nothing.

        One libsodium call per blob with one reused buffer and the key revealed once, so a batch of small
        blobs (a search's candidate embeddings) pays libsodium's work rather than the binding's. The first
        blob that fails raises `BatchOpenFailed` naming its position; nothing of the batch is returned."""
        if len(domains) != len(sealed):
            raise InvalidVaultInput(f"open_many got {len(domains)} domains for {len(sealed)} blobs")
        items: list[tuple[bytes, bytes, bytes]] = []
        for index, (domain, blob) in enumerate(zip(domains, sealed, strict=True)):
            if len(blob) < SEAL_OVERHEAD or blob[0] != SEAL_VERSION:
                raise BatchOpenFailed(index, f"sealed blob {index} of the batch is short or of an unknown version")
            items.append((blob[1 + NONCE_LENGTH :], self.aad(domain) + _VERSION_BYTE, blob[1 : 1 + NONCE_LENGTH]))
        opened: list[bytes] = []
        for index, body in enumerate(decrypt_many(self._keys.enc.reveal(), items)):
            if body is None:
                domain = domains[index]
                raise BatchOpenFailed(
                    index,
                    f"sealed blob does not open in vault {self.vault_id!r} as {domain.kind.name.lower()} "
                    f"{domain.label!r}: wrong vault, record, domain or key, or altered bytes",
                )
            try:
                opened.append(_unframe(body))
            except OpenFailed as error:
                raise BatchOpenFailed(index, str(error)) from None
        return opened


def _unframe(body: bytes) -> bytes:
    """The payload of an authenticated body: raw, or its zstd frame decoded within the bound."""
    mode, payload = body[0], body[1:]
    if mode == _MODE_RAW:
        return payload
    if mode != _MODE_ZSTD:
        raise OpenFailed(f"sealed blob carries unknown compression mode {mode}")
    return _inflate(payload)


def _inflate(frame: bytes) -> bytes:
    try:
        declared = compression.frame_size(frame)
    except ValueError as exc:
        raise OpenFailed(f"authenticated payload is not a zstd frame: {exc}") from None
    if declared < 0:
        raise SizeLimitExceeded("zstd frame does not declare its content size; refusing an unbounded decode")
    if declared > MAX_PLAINTEXT_BYTES:
        raise SizeLimitExceeded(f"zstd frame declares {declared} bytes; the decode bound is {MAX_PLAINTEXT_BYTES}")
    try:
        return compression.decompress_bounded(frame, declared)
    except ValueError as exc:
        raise OpenFailed(f"authenticated zstd frame does not decode: {exc}") from None
