"""Sealing: round trips, refusals across vaults, records and domains, bit flips, the 16 MiB bound."""

from __future__ import annotations

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st
from nacl.bindings import crypto_aead_xchacha20poly1305_ietf_encrypt
from undercroft_vault import (
    Domain,
    InvalidVaultInput,
    OpenFailed,
    Sealer,
    SecretBytes,
    SizeLimitExceeded,
    VaultKeys,
    derive_vault_keys,
    validate_vault_id,
)
from undercroft_vault.sealing import MAX_PLAINTEXT_BYTES

DOMAINS = [
    Domain.content("d1"),
    Domain.embedding("d1"),
    Domain.tokens("d1"),
    Domain.fde_tokens("d1"),
    Domain.pq_artifact("d1"),
    Domain.kg_object("d1"),
    Domain.kg_terms("d1"),
    Domain.kg_name("d1"),
    Domain.vault_secret("d1"),
]


@settings(max_examples=60, deadline=None)
@given(payload=st.binary(max_size=4096), domain=st.sampled_from(DOMAINS))
def test_round_trip_any_bytes(keys_a: VaultKeys, payload: bytes, domain: Domain) -> None:
    sealer = Sealer(keys_a)
    assert sealer.open(domain, sealer.seal(domain, payload)) == payload


@settings(max_examples=60, deadline=None)
@given(payload=st.binary(min_size=0, max_size=600), data=st.data())
def test_any_single_bit_flip_is_refused(keys_a: VaultKeys, payload: bytes, data: st.DataObject) -> None:
    sealer = Sealer(keys_a)
    sealed = bytearray(sealer.seal(Domain.content("d1"), payload))
    bit = data.draw(st.integers(0, len(sealed) * 8 - 1))  # covers version, nonce, ciphertext and tag
    sealed[bit // 8] ^= 1 << (bit % 8)
    with pytest.raises(OpenFailed):
        sealer.open(Domain.content("d1"), bytes(sealed))


@settings(max_examples=40, deadline=None)
@given(payload=st.binary(max_size=512), source=st.sampled_from(DOMAINS), target=st.sampled_from(DOMAINS))
def test_cross_domain_replay_is_refused(keys_a: VaultKeys, payload: bytes, source: Domain, target: Domain) -> None:
    sealer = Sealer(keys_a)
    sealed = sealer.seal(source, payload)
    if source == target:
        assert sealer.open(target, sealed) == payload
    else:
        with pytest.raises(OpenFailed):
            sealer.open(target, sealed)


@settings(max_examples=30, deadline=None)
@given(payload=st.binary(max_size=512), bit=st.integers(0, 7), position=st.integers(0, 1000))
def test_any_aad_bit_flip_is_refused(keys_a: VaultKeys, payload: bytes, bit: int, position: int) -> None:
    # Seal under a raw AEAD with the exact AAD, flip one AAD bit, and show the vault refuses the result.
    sealer = Sealer(keys_a, random_bytes=lambda n: bytes(n))
    domain = Domain.content("record-7")
    aad = bytearray(sealer.aad(domain) + b"\x01")
    aad[position % len(aad)] ^= 1 << bit
    body = crypto_aead_xchacha20poly1305_ietf_encrypt(b"\x00" + payload, bytes(aad), bytes(24), keys_a.enc.reveal())
    with pytest.raises(OpenFailed):
        sealer.open(domain, b"\x01" + bytes(24) + body)


def test_cross_vault_and_cross_record_replays_are_refused(keys_a: VaultKeys, keys_b: VaultKeys) -> None:
    sealed = Sealer(keys_a).seal(Domain.content("d1"), b"secret words")
    with pytest.raises(OpenFailed, match="in vault 'beta'"):
        Sealer(keys_b).open(Domain.content("d1"), sealed)
    with pytest.raises(OpenFailed, match="'d2'"):
        Sealer(keys_a).open(Domain.content("d2"), sealed)
    # same key material but another vault id in the AAD still refuses: the id is bound, not just the key
    impostor = VaultKeys("beta", keys_a.salt, keys_a.enc, keys_a.mac, keys_a.manifest, keys_a.sample, keys_a.chain)
    with pytest.raises(OpenFailed):
        Sealer(impostor).open(Domain.content("d1"), sealed)


def test_labels_that_look_alike_stay_apart(keys_a: VaultKeys) -> None:
    sealer = Sealer(keys_a)
    sealed = sealer.seal(Domain.embedding("x"), b"vector")
    assert Domain.content("x/emb").label == Domain.embedding("x").label
    with pytest.raises(OpenFailed):
        sealer.open(Domain.content("x/emb"), sealed)


def test_compression_pays_or_falls_back_to_raw(keys_a: VaultKeys) -> None:
    sealer = Sealer(keys_a)
    text = b"the same sentence again. " * 40
    assert len(sealer.seal(Domain.content("d"), text)) < len(text) // 4
    noise = bytes((i * 193 + 7) % 256 for i in range(800))
    incompressible = zstandard.ZstdCompressor().compress(noise)  # already compressed: zstd cannot gain
    sealed = sealer.seal(Domain.content("d"), incompressible)
    assert len(sealed) == len(incompressible) + 42
    assert sealer.open(Domain.content("d"), sealed) == incompressible


def test_size_bound_is_a_refusal_both_ways(keys_a: VaultKeys) -> None:
    sealer = Sealer(keys_a, random_bytes=lambda n: bytes(n))
    with pytest.raises(SizeLimitExceeded, match="sealing bound is 16777216"):
        sealer.seal(Domain.content("d"), bytes(MAX_PLAINTEXT_BYTES + 1))
    # an authentic frame that declares more than 16 MiB is refused before any buffer is sized
    bomb = zstandard.ZstdCompressor(write_content_size=True).compress(bytes(MAX_PLAINTEXT_BYTES + 1))
    body = crypto_aead_xchacha20poly1305_ietf_encrypt(
        b"\x01" + bomb, sealer.aad(Domain.content("d")) + b"\x01", bytes(24), keys_a.enc.reveal()
    )
    with pytest.raises(SizeLimitExceeded, match="declares 16777217 bytes"):
        sealer.open(Domain.content("d"), b"\x01" + bytes(24) + body)
    unsized = zstandard.ZstdCompressor(write_content_size=False).compressobj()
    frame = unsized.compress(b"abc" * 100) + unsized.flush()
    body = crypto_aead_xchacha20poly1305_ietf_encrypt(
        b"\x01" + frame, sealer.aad(Domain.content("d")) + b"\x01", bytes(24), keys_a.enc.reveal()
    )
    with pytest.raises(SizeLimitExceeded, match="does not declare its content size"):
        sealer.open(Domain.content("d"), b"\x01" + bytes(24) + body)


def test_short_and_unknown_version_blobs_are_refused(keys_a: VaultKeys) -> None:
    sealer = Sealer(keys_a)
    with pytest.raises(OpenFailed, match="shorter than the 42-byte minimum"):
        sealer.open(Domain.content("d"), b"\x01" * 10)
    sealed = bytearray(sealer.seal(Domain.content("d"), b"x"))
    sealed[0] = 2
    with pytest.raises(OpenFailed, match="format version 2"):
        sealer.open(Domain.content("d"), bytes(sealed))


def test_nonces_are_fresh(keys_a: VaultKeys) -> None:
    sealer = Sealer(keys_a)
    assert sealer.seal(Domain.content("d"), b"same") != sealer.seal(Domain.content("d"), b"same")
    with pytest.raises(InvalidVaultInput, match="returned 3 bytes, wanted 24"):
        Sealer(keys_a, random_bytes=lambda n: b"abc").seal(Domain.content("d"), b"x")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "must not be empty"),
        ("../etc", "path separator"),
        ("a/b", "path separator"),
        ("a\\b", "path separator"),
        ("..", "path traversal"),
        ("a..b", "path traversal"),
        ("x" * 65, "65 characters; at most 64"),
        (".hidden", "starting with a letter or digit"),
        ("tab\there", "may use only ASCII"),
        ("caf\u00e9", "may use only ASCII"),
    ],
)
def test_vault_id_guard(name: str, message: str) -> None:
    with pytest.raises(InvalidVaultInput, match=message):
        validate_vault_id(name)
    with pytest.raises(InvalidVaultInput):
        derive_vault_keys(SecretBytes(bytes(32)), name, bytes(32))


def test_vault_id_guard_accepts_plain_names() -> None:
    for name in ("alpha", "team-7", "a.b_c", "X" * 64):
        assert validate_vault_id(name) == name


@pytest.mark.parametrize(
    ("value", "message"),
    [("", "record id must not be empty"), ("a\nb", "control character"), ("x" * 1025, "1025 bytes; at most 1024")],
)
def test_domain_components_are_guarded(value: str, message: str) -> None:
    with pytest.raises(InvalidVaultInput, match=message):
        Domain.content(value)
