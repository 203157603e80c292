"""Tags, fingerprints, the blind-index secret, the chain step, anchors and the witness."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from undercroft_vault import (
    GENESIS,
    Anchor,
    AnchorPosition,
    AuditRow,
    BlindIndex,
    ChainBroken,
    InvalidVaultInput,
    OpenFailed,
    RollbackDetected,
    Sealer,
    SecretBytes,
    TagMismatch,
    VaultKeys,
    chain_step,
    check_witness,
    compute_tag,
    fingerprint,
    locate_anchor,
    reconcile,
    replay,
    verify_tag,
    witness_digest,
)

META = b'{"wing":"w"}'


@settings(max_examples=40, deadline=None)
@given(blob=st.binary(min_size=1, max_size=200), data=st.data())
def test_any_bit_flip_in_tag_or_covered_bytes_fails(keys_a: VaultKeys, blob: bytes, data: st.DataObject) -> None:
    tag = compute_tag(keys_a, "d1", META, blob)
    verify_tag(keys_a, "d1", META, blob, tag)
    which = data.draw(st.sampled_from(["tag", "blob", "meta"]))
    target = bytearray({"tag": tag, "blob": blob, "meta": META}[which])
    bit = data.draw(st.integers(0, len(target) * 8 - 1))
    target[bit // 8] ^= 1 << (bit % 8)
    args = {"tag": tag, "blob": blob, "meta": META} | {which: bytes(target)}
    assume(b"\x1f" not in args["meta"])  # a flip into the separator is refused as input instead
    with pytest.raises(TagMismatch, match="record 'd1' in vault 'alpha' fails its HMAC tag"):
        verify_tag(keys_a, "d1", args["meta"], args["blob"], args["tag"])


def test_tag_binds_record_id_and_vault(keys_a: VaultKeys, keys_b: VaultKeys) -> None:
    tag = compute_tag(keys_a, "d1", META, b"bytes")
    with pytest.raises(TagMismatch):
        verify_tag(keys_a, "d2", META, b"bytes", tag)
    with pytest.raises(TagMismatch):
        verify_tag(keys_b, "d1", META, b"bytes", tag)


def test_separator_in_id_or_meta_is_refused(keys_a: VaultKeys) -> None:
    with pytest.raises(InvalidVaultInput, match="record id 'a\\\\x1fb' contains the unit separator"):
        compute_tag(keys_a, "a\x1fb", META, b"")
    with pytest.raises(InvalidVaultInput, match="meta_at_rest contains the unit separator"):
        compute_tag(keys_a, "a", b"x\x1fy", b"")
    with pytest.raises(InvalidVaultInput, match="record id must not be empty"):
        compute_tag(keys_a, "", META, b"")


def test_fingerprints_are_keyed_and_16_bytes(keys_a: VaultKeys, keys_b: VaultKeys) -> None:
    assert len(fingerprint(keys_a, b"words")) == 16
    assert fingerprint(keys_a, b"words") == fingerprint(keys_a, b"words")
    assert fingerprint(keys_a, b"words") != fingerprint(keys_b, b"words")
    assert fingerprint(keys_a, b"words") != compute_tag(keys_a, "words", b"", b"")[:16]


def test_blind_secret_survives_rotation_by_resealing(keys_a: VaultKeys, keys_b: VaultKeys) -> None:
    blind = BlindIndex.generate()
    value = blind.blind("entity", "Alice")
    sealed_old = blind.seal(Sealer(keys_a))
    sealed_new = blind.reseal(sealed_old, Sealer(keys_a), Sealer(keys_b))
    assert BlindIndex.open_sealed(Sealer(keys_b), sealed_new).blind("entity", "Alice") == value
    with pytest.raises(OpenFailed):
        BlindIndex.open_sealed(Sealer(keys_a), sealed_new)
    other = BlindIndex.generate()
    with pytest.raises(OpenFailed, match="differs from the one held"):
        other.reseal(sealed_old, Sealer(keys_a), Sealer(keys_b))
    assert blind.blind("entity", "Alice") != blind.blind("subject", "Alice")
    with pytest.raises(InvalidVaultInput, match="must be 32 bytes, got 16"):
        BlindIndex(SecretBytes(bytes(16)))


def rows(n: int) -> list[AuditRow]:
    return [AuditRow(f"drawer-{i}", bytes([i]) * 32, f"2026-01-0{1 + i % 9}T00:00:00Z") for i in range(n)]


def test_each_field_is_in_the_chain_step(keys_a: VaultKeys) -> None:
    row = AuditRow("d", bytes(32), "t")
    base = chain_step(keys_a, GENESIS, row)
    assert chain_step(keys_a, GENESIS, AuditRow("e", bytes(32), "t")) != base
    assert chain_step(keys_a, GENESIS, AuditRow("d", bytes(31) + b"\x01", "t")) != base
    assert chain_step(keys_a, GENESIS, AuditRow("d", bytes(32), "u")) != base
    assert chain_step(keys_a, b"\x01" * 32, row) != base
    # length prefixes keep ("ab", "c") and ("a", "bc") apart
    assert chain_step(keys_a, GENESIS, AuditRow("ab", b"c", "t")) != chain_step(
        keys_a, GENESIS, AuditRow("a", b"bc", "t")
    )


def test_anchor_positions(keys_a: VaultKeys) -> None:
    log = rows(5)
    heads = [replay(keys_a, log[:i]) for i in range(6)]
    assert locate_anchor(keys_a, log, Anchor(heads[5], 5)) is AnchorPosition.EQUAL
    assert locate_anchor(keys_a, log, Anchor(heads[2], 2)) is AnchorPosition.BEHIND
    assert locate_anchor(keys_a, log, Anchor(GENESIS, 0)) is AnchorPosition.BEHIND
    assert locate_anchor(keys_a, [], Anchor(GENESIS, 0)) is AnchorPosition.EQUAL
    assert locate_anchor(keys_a, log, Anchor(heads[2], 3)) is AnchorPosition.ABSENT  # head at the wrong height
    assert locate_anchor(keys_a, log[:3], Anchor(heads[5], 5)) is AnchorPosition.ABSENT  # rolled back db
    forked = [*log[:3], AuditRow("forged", bytes(32), "t")]
    assert locate_anchor(keys_a, forked, Anchor(heads[4], 4)) is AnchorPosition.ABSENT


def test_reconcile_refuses_edited_rows(keys_a: VaultKeys) -> None:
    log = rows(4)
    head = replay(keys_a, log)
    assert reconcile(keys_a, log, head, Anchor(replay(keys_a, log[:2]), 2)) is AnchorPosition.BEHIND
    edited = [log[0], AuditRow("trust/quarantine", log[1].tag, log[1].at), *log[2:]]
    with pytest.raises(ChainBroken, match="audit-chain head: 4 audit rows of vault 'alpha'"):
        reconcile(keys_a, edited, head, Anchor(GENESIS, 0))


def test_anchor_is_validated() -> None:
    with pytest.raises(InvalidVaultInput, match="anchor head must be 32 bytes, got 3"):
        Anchor(b"abc", 0)
    with pytest.raises(InvalidVaultInput, match="must not be negative"):
        Anchor(GENESIS, -1)


def test_witness_is_unkeyed_count_bound_and_catches_rewind(keys_a: VaultKeys) -> None:
    log = rows(6)
    witness = witness_digest(log[:4])
    assert witness.count == 4
    assert check_witness(log, witness) == 2
    assert check_witness(log[:4], witness) == 0
    with pytest.raises(RollbackDetected, match="holds 3 rows but 4 were witnessed"):
        check_witness(log[:3], witness)
    rewritten = [*log[:2], AuditRow("x", bytes(32), "t"), *log[3:]]
    with pytest.raises(RollbackDetected, match="first 4 audit rows no longer match"):
        check_witness(rewritten, witness)
    assert witness_digest([]).digest != witness_digest([AuditRow("", b"", "")]).digest
