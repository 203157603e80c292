"""The committed seal, bundle and Argon2id vectors recomputed WITHOUT the vault's own primitives.

The vault seals with libsodium's XChaCha20-Poly1305 (PyNaCl) and derives passphrase keys with argon2-cffi.
Here the same bytes come from elsewhere: XChaCha20-Poly1305 is HChaCha20 (written out below, checked against
the draft-irtf-cfrg-xchacha test vector) followed by `cryptography`'s ChaCha20-Poly1305 (OpenSSL); X25519 is
`cryptography`'s; HKDF is written out over the stdlib `hmac`; Argon2id is libsodium's (PyNaCl ``pwhash``). A
vector the implementation produced wrongly, or that drifts, fails here even if it still round-trips there.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import pathlib
import struct

import pytest
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from undercroft_vault import Domain, parse_identity

KAT = json.loads((pathlib.Path(__file__).parent / "vectors" / "vault_kat.json").read_text())
NONCE = bytes.fromhex(KAT["nonce"])


def h(text: str) -> bytes:
    return bytes.fromhex(text)


# --- HChaCha20 by hand (RFC 8439 quarter round; draft-irtf-cfrg-xchacha-03 §2.2) --------------------------------

_MASK = 0xFFFFFFFF


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) & _MASK) | (value >> (32 - bits))


def _quarter(state: list[int], a: int, b: int, c: int, d: int) -> None:
    state[a] = (state[a] + state[b]) & _MASK
    state[d] = _rotl(state[d] ^ state[a], 16)
    state[c] = (state[c] + state[d]) & _MASK
    state[b] = _rotl(state[b] ^ state[c], 12)
    state[a] = (state[a] + state[b]) & _MASK
    state[d] = _rotl(state[d] ^ state[a], 8)
    state[c] = (state[c] + state[d]) & _MASK
    state[b] = _rotl(state[b] ^ state[c], 7)


def hchacha20(key: bytes, nonce16: bytes) -> bytes:
    """The 32-byte subkey: 20 ChaCha rounds over (constants, key, nonce), words 0-3 and 12-15, no feed-forward."""
    assert len(key) == 32 and len(nonce16) == 16
    state = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    state += list(struct.unpack("<8I", key)) + list(struct.unpack("<4I", nonce16))
    for _ in range(10):
        _quarter(state, 0, 4, 8, 12)
        _quarter(state, 1, 5, 9, 13)
        _quarter(state, 2, 6, 10, 14)
        _quarter(state, 3, 7, 11, 15)
        _quarter(state, 0, 5, 10, 15)
        _quarter(state, 1, 6, 11, 12)
        _quarter(state, 2, 7, 8, 13)
        _quarter(state, 3, 4, 9, 14)
    return struct.pack("<8I", *state[0:4], *state[12:16])


def xchacha_encrypt(key: bytes, nonce24: bytes, plaintext: bytes, aad: bytes) -> bytes:
    subkey = hchacha20(key, nonce24[:16])
    return ChaCha20Poly1305(subkey).encrypt(b"\x00" * 4 + nonce24[16:], plaintext, aad)


def xchacha_decrypt(key: bytes, nonce24: bytes, ciphertext: bytes, aad: bytes) -> bytes:
    subkey = hchacha20(key, nonce24[:16])
    return ChaCha20Poly1305(subkey).decrypt(b"\x00" * 4 + nonce24[16:], ciphertext, aad)


def hkdf_sha256(salt: bytes, ikm: bytes, info: bytes, length: int = 32) -> bytes:
    """RFC 5869 written out: extract, then expand T(1) ‖ T(2) … (one block suffices for 32 bytes)."""
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes((counter,)), hashlib.sha256).digest()
        out, counter = out + block, counter + 1
    return out[:length]


def test_hchacha20_matches_the_drafts_test_vector() -> None:
    """draft-irtf-cfrg-xchacha-03 §2.2.1: the by-hand HChaCha20 above is the real one."""
    key = bytes(range(32))
    nonce = h("000000090000004a0000000031415927")
    assert hchacha20(key, nonce).hex() == "82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc"


def test_hkdf_by_hand_matches_rfc5869_case_1() -> None:
    ikm, salt, info = bytes([0x0B] * 22), bytes(range(13)), bytes(range(0xF0, 0xFA))
    okm = hkdf_sha256(salt, ikm, info, 42)
    assert okm.hex() == ("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")


# --- the seal -------------------------------------------------------------------------------------------------


def _aad(domain: Domain) -> bytes:
    return domain.aad(KAT["vault_id"]) + b"\x01"  # the domain's AAD, then the seal's version byte


@pytest.mark.parametrize(
    ("plain", "sealed", "domain"),
    [
        ("short_plaintext", "short_sealed", Domain.embedding("drawer-1")),
        ("drawer_plaintext", "drawer_sealed", Domain.content("drawer-1")),
    ],
)
def test_the_committed_seals_open_under_an_independent_xchacha20_poly1305(
    plain: str, sealed: str, domain: Domain
) -> None:
    """``0x01 ‖ nonce (24) ‖ XChaCha20-Poly1305(enc key, mode byte ‖ body, AAD ‖ 0x01)``; mode 0 raw, 1 zstd."""
    blob, plaintext = h(KAT["seal"][sealed]), h(KAT["seal"][plain])
    assert blob[0] == 1 and blob[1:25] == NONCE
    enc = h(KAT["keys"]["enc"])
    body = xchacha_decrypt(enc, NONCE, blob[25:], _aad(domain))
    mode, payload = body[0], body[1:]
    if mode == 0:
        assert payload == plaintext
    else:
        import zstandard

        assert mode == 1 and zstandard.ZstdDecompressor().decompress(payload) == plaintext
        assert len(payload) < len(plaintext)  # compression is chosen only when it pays
    # ... and the whole blob is reproduced from its parts, byte for byte.
    assert b"\x01" + NONCE + xchacha_encrypt(enc, NONCE, body, _aad(domain)) == blob


def test_a_seal_does_not_open_under_another_domain_or_vault() -> None:
    blob, enc = h(KAT["seal"]["short_sealed"]), h(KAT["keys"]["enc"])
    from cryptography.exceptions import InvalidTag

    with pytest.raises(InvalidTag):
        xchacha_decrypt(enc, NONCE, blob[25:], _aad(Domain.content("drawer-1")))
    with pytest.raises(InvalidTag):
        xchacha_decrypt(enc, NONCE, blob[25:], Domain.embedding("drawer-1").aad("beta") + b"\x01")


# --- the bundle -----------------------------------------------------------------------------------------------


def _x25519_public(secret: bytes) -> bytes:
    return X25519PrivateKey.from_private_bytes(secret).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def test_the_committed_v1_bundle_is_reproduced_from_its_parts_independently() -> None:
    """``MAGIC ‖ eph_pub ‖ nonce ‖ XChaCha20-Poly1305(key, payload, AAD = MAGIC ‖ eph_pub)`` where
    ``key = HKDF(salt = eph_pub ‖ recipient, ikm = DH, info = "undercroft.v1/bundle")``."""
    vector = KAT["bundle_v1"]
    identity = parse_identity(vector["identity"])  # the text format only; its secret feeds OpenSSL below
    recipient_secret = identity.x25519.reveal()
    recipient = _x25519_public(recipient_secret)
    eph_secret = h(vector["ephemeral"])
    eph_pub = _x25519_public(eph_secret)
    shared = X25519PrivateKey.from_private_bytes(eph_secret).exchange(X25519PublicKey.from_public_bytes(recipient))
    # The recipient's side of the same exchange agrees (what opening does).
    opened = X25519PrivateKey.from_private_bytes(recipient_secret).exchange(X25519PublicKey.from_public_bytes(eph_pub))
    assert opened == shared
    key = hkdf_sha256(eph_pub + recipient, shared, b"undercroft.v1/bundle")
    header = b"UNDERCROFT-BUNDLE-1" + eph_pub
    expected = header + NONCE + xchacha_encrypt(key, NONCE, h(vector["payload"]), header)
    assert expected.hex() == vector["bundle"]
    bundle = h(vector["bundle"])
    assert xchacha_decrypt(key, bundle[51:75], bundle[75:], bundle[:51]) == h(vector["payload"])


def test_the_committed_v2_assembly_is_reproduced_from_its_parts_independently() -> None:
    """v2 adds the ML-KEM ciphertext to the header and its shared secret to the HKDF input (after the DH)."""
    vector, v1 = KAT["bundle_v2_assembly"], KAT["bundle_v1"]
    eph_secret, recipient = h(v1["ephemeral"]), h(vector["recipient_x"])
    eph_pub = _x25519_public(eph_secret)
    shared = X25519PrivateKey.from_private_bytes(eph_secret).exchange(X25519PublicKey.from_public_bytes(recipient))
    key = hkdf_sha256(eph_pub + recipient, shared + h(vector["kem_shared"]), b"undercroft.v2/bundle")
    header = b"UNDERCROFT-BUNDLE-2" + eph_pub + h(vector["kem_ct"])
    expected = header + NONCE + xchacha_encrypt(key, NONCE, h(v1["payload"]), header)
    assert expected.hex() == vector["bundle"]


# --- Argon2id -------------------------------------------------------------------------------------------------


def test_argon2id_vector_under_libsodium() -> None:
    """The vault derives with argon2-cffi (libargon2); libsodium's argon2id (p = 1) must give the same 32 bytes."""
    from nacl import pwhash

    vector = KAT["argon2id"]
    key = pwhash.argon2id.kdf(
        32,
        vector["passphrase"].encode("utf-8"),
        h(vector["salt"]),
        opslimit=3,
        memlimit=64 * 1024 * 1024,
    )
    assert key.hex() == vector["key"]


def test_the_drawer_id_key_is_hmac_sha256_of_its_tag_under_the_blind_secret() -> None:
    """The keyed id recipe's key (``BlindIndex.drawer_id_key``) recomputed from its definition with the stdlib."""
    vector = KAT["blind"]
    expected = hmac.digest(h(vector["secret"]), b"undercroft.drawer-id-key.v1\x00", hashlib.sha256).hex()
    assert vector["drawer_id_key"] == expected
