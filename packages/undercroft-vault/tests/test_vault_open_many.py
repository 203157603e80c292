"""`Sealer.open_many`: the batched open equals `open` blob for blob, and refuses exactly what `open` refuses."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from undercroft_vault import BatchOpenFailed, Domain, InvalidVaultInput, OpenFailed, Sealer, VaultKeys
from undercroft_vault._internal.aead import decrypt_many, encrypt_many


@settings(max_examples=40, deadline=None)
@given(payloads=st.lists(st.binary(max_size=1500), max_size=12))
def test_open_many_equals_open_blob_for_blob(keys_a: VaultKeys, payloads: list[bytes]) -> None:
    sealer = Sealer(keys_a)
    domains = [Domain.embedding(f"d{i}") for i in range(len(payloads))]
    sealed = [sealer.seal(domain, payload) for domain, payload in zip(domains, payloads, strict=True)]
    assert sealer.open_many(domains, sealed) == [sealer.open(d, s) for d, s in zip(domains, sealed, strict=True)]
    assert sealer.open_many(domains, sealed) == payloads


def test_direct_binding_equals_the_public_one(keys_a: VaultKeys) -> None:
    sealer = Sealer(keys_a)
    blobs = [sealer.seal(Domain.content(f"d{i}"), bytes([i]) * (i * 37)) for i in range(20)]
    items = [(b[25:], sealer.aad(Domain.content(f"d{i}")) + b"\x01", b[1:25]) for i, b in enumerate(blobs)]
    items[7] = (items[7][0][:-1] + bytes([items[7][0][-1] ^ 1]), items[7][1], items[7][2])  # a flipped tag byte
    key = keys_a.enc.reveal()
    direct = list(decrypt_many(key, items))
    assert direct == list(decrypt_many(key, items, direct=False))
    assert direct[7] is None and all(plain is not None for i, plain in enumerate(direct) if i != 7)


@pytest.mark.parametrize("spoil", ["flip", "swap", "short", "version", "foreign"])
def test_the_first_failing_blob_is_named_and_nothing_is_returned(
    keys_a: VaultKeys, keys_b: VaultKeys, spoil: str
) -> None:
    sealer = Sealer(keys_a)
    domains = [Domain.embedding(f"d{i}") for i in range(5)]
    sealed = [sealer.seal(domain, b"vector %d" % i * 20) for i, domain in enumerate(domains)]
    if spoil == "flip":
        sealed[3] = sealed[3][:-1] + bytes([sealed[3][-1] ^ 0x01])
    elif spoil == "swap":  # a blob moved to another record's row
        sealed[3] = sealed[2]
    elif spoil == "short":
        sealed[3] = sealed[3][:20]
    elif spoil == "version":
        sealed[3] = b"\x02" + sealed[3][1:]
    else:  # sealed by another vault under the same domain
        sealed[3] = Sealer(keys_b).seal(domains[3], b"vector 3" * 20)
    with pytest.raises(BatchOpenFailed) as caught:
        sealer.open_many(domains, sealed)
    assert caught.value.index == 3
    assert isinstance(caught.value, OpenFailed)
    with pytest.raises(OpenFailed):
        sealer.open(domains[3], sealed[3])


def test_mismatched_lengths_are_bad_input(keys_a: VaultKeys) -> None:
    sealer = Sealer(keys_a)
    with pytest.raises(InvalidVaultInput, match="2 domains for 1 blobs"):
        sealer.open_many([Domain.embedding("a"), Domain.embedding("b")], [sealer.seal(Domain.embedding("a"), b"x")])
    assert sealer.open_many([], []) == []


def test_seal_many_equals_seal_for_the_same_nonces(keys_a: VaultKeys) -> None:
    """Byte for byte what `seal` gives (each blob its own domain and nonce), and every blob opens as itself only."""
    payloads = [b"", b"x" * 31, b"meta %d " % 7 * 40, bytes(range(256)) * 3]
    domains = [Domain.content("d1"), Domain.embedding("d1"), Domain.drawer_meta("d1"), Domain.content("d2")]
    nonces = [bytes([n]) * 24 for n in range(len(payloads))]
    batched = Sealer(keys_a, random_bytes=_feed(nonces)).seal_many(domains, payloads)
    single = Sealer(keys_a, random_bytes=_feed(nonces))
    assert batched == [single.seal(d, p) for d, p in zip(domains, payloads, strict=True)]
    opener = Sealer(keys_a)
    assert opener.open_many(domains, batched) == payloads
    with pytest.raises(OpenFailed):
        opener.open(Domain.drawer_meta("d1"), batched[0])  # the content blob is not the meta
    fresh = Sealer(keys_a).seal_many([Domain.content(f"d{i}") for i in range(50)], [b"same"] * 50)
    assert len({blob[1:25] for blob in fresh}) == 50  # a fresh nonce per blob, never one per batch


def test_direct_encryption_equals_the_public_one(keys_a: VaultKeys) -> None:
    key = keys_a.enc.reveal()
    items = [(bytes([i]) * (i * 41), b"aad %d" % i, bytes([i]) * 24) for i in range(12)]
    assert encrypt_many(key, items) == encrypt_many(key, items, direct=False)
    with pytest.raises(InvalidVaultInput, match="2 domains for 1 payloads"):
        Sealer(keys_a).seal_many([Domain.content("a"), Domain.content("b")], [b"x"])


def _feed(nonces: list[bytes]) -> Callable[[int], bytes]:
    queue = list(nonces)
    return lambda size: queue.pop(0)[:size]
