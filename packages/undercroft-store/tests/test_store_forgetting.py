"""Provable forgetting: receipts that verify, receipts that fail, and a resurrected drawer on the raw file."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import ChainBroken, DrawerNotFound, InvalidDrawer, Palace, ReadOnlyStore
from undercroft_store.governance.forgetting import ForgetReceipt, InvalidReceipt, forget, verify_forgetting
from undercroft_vault import generate_signing_identity

TEXTS = ["Alice lives at 12 Elm Street.", "Alice's phone is 555-0100.", "The team chose GraphQL."]


def _fill(palace: Palace) -> list[str]:
    with palace.open_vault("default", HashEmbedder()) as store:
        return [store.remember(text, wing="people", room="alice", added_by="t")[0].id for text in TEXTS]


def _raw(home: Path) -> sqlite3.Connection:
    return sqlite3.connect(home / "vaults" / "default" / "vault.db", isolation_level=None)


def test_forget_destroys_and_the_receipt_verifies(palace: Palace) -> None:
    ids = _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        height_before = store.stats().chain_records
        receipt = forget(store, ids[:2], reason="data subject request")
        assert receipt.ids == tuple(ids[:2])
        assert [d.content_sha256 for d in receipt.body.forgotten] == [
            hashlib.sha256(text.encode()).hexdigest() for text in TEXTS[:2]
        ]
        # the tombstones sit right after the old head, the forget record right after them
        assert (receipt.body.interval_start, receipt.body.interval_end) == (height_before, height_before + 2)
        assert receipt.record_height == height_before + 3 == store.stats().chain_records
        for drawer_id in ids[:2]:
            with pytest.raises(DrawerNotFound):
                store.get(drawer_id)
        assert store.get(ids[2]).content == TEXTS[2]
        verdict = verify_forgetting(store, receipt.to_json())
        assert (verdict.status, verdict.ok, verdict.findings, verdict.signature) == ("verified", True, (), "unsigned")
        assert verdict.render().endswith("FORGETTING VERIFIED")
        report = store.verify()
        assert report.ok, report.render()
    assert TEXTS[0].encode() not in (palace.home / "vaults" / "default" / "vault.db").read_bytes()


def test_signed_receipt_verifies_against_its_pinned_sender(palace: Palace) -> None:
    ids = _fill(palace)
    signer, other = generate_signing_identity(hybrid=False), generate_signing_identity(hybrid=False)
    with palace.open_vault("default", HashEmbedder()) as store:
        document = forget(store, [ids[0]], signer=signer).to_json()
        pinned = signer.sender().encode()
        verdict = verify_forgetting(store, document, pinned_sender=pinned)
        assert (verdict.status, verdict.signature, verdict.sender) == ("verified", "legacy-ed25519", pinned)
        wrong = verify_forgetting(store, document, pinned_sender=other.sender().encode())
        assert wrong.status == "failed" and "not the pinned sender" in wrong.findings[0]


@pytest.mark.parametrize(
    ("edit", "finding"),
    [
        (lambda d: d["forgotten"][0].update(content_sha256="0" * 64), "body was edited"),
        (lambda d: d.update(head_after="1" * 64), "body was edited"),
        (lambda d: d.update(reason="housekeeping"), "body was edited"),
        (lambda d: d["record"].update(height=1), "no forget record"),
    ],
)
def test_a_tampered_receipt_fails(palace: Palace, edit: object, finding: str) -> None:
    ids = _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        document = json.loads(forget(store, [ids[1]]).to_json())
        edit(document)  # type: ignore[operator]
        verdict = verify_forgetting(store, json.dumps(document))
        assert not verdict.ok and verdict.render().endswith("FORGETTING FAILED")
        assert any(finding in line for line in verdict.findings), verdict.findings


def test_a_consistently_reforged_body_still_fails_without_the_key(palace: Palace) -> None:
    # An editor who also recomputes the label names a record the chain never held.
    ids = _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        receipt = forget(store, [ids[0]])
        forged = ForgetReceipt(
            type(receipt.body)(**{**receipt.body.__dict__, "reason": "routine"}), receipt.record_height
        )
        verdict = verify_forgetting(store, forged.to_json())
        assert verdict.status == "failed" and "no forget record" in verdict.findings[0]


def test_a_signature_with_no_sender_is_refused(palace: Palace) -> None:
    ids = _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        document = json.loads(forget(store, [ids[0]], signer=generate_signing_identity(hybrid=False)).to_json())
        del document["attestation"]["signature"]["sender"]
        verdict = verify_forgetting(store, json.dumps(document))
        assert (verdict.status, verdict.signature) == ("failed", "refused")
        assert "names no sender" in verdict.findings[0]


def test_a_resurrected_drawer_fails_the_receipt_and_verify(palace: Palace, home: Path) -> None:
    ids = _fill(palace)
    with _raw(home) as raw:
        old = raw.execute("SELECT * FROM drawers WHERE id = ?", (ids[0],)).fetchone()
    with palace.open_vault("default", HashEmbedder()) as store:
        document = forget(store, [ids[0]]).to_json()
    with _raw(home) as raw:  # the offline attacker writes the old row bytes back
        raw.execute(f"INSERT INTO drawers VALUES ({', '.join('?' * len(old))})", old)
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        verdict = verify_forgetting(store, document)
        assert verdict.status == "failed"
        assert f"drawer {ids[0]} is present after its recorded destruction (resurrected)" in verdict.findings
        report = store.verify()
        assert report.resurrected == [ids[0]] and not report.ok
        assert f"RESURRECTED: {ids[0]}" in report.render() and report.render().endswith("VERIFY FAILED")


def test_a_flipped_tombstone_row_fails_the_receipt_and_verify(palace: Palace, home: Path) -> None:
    """The tombstones table repeats each delete record's tag: one flipped bit there is named by both checks."""
    ids = _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        document = forget(store, [ids[1]]).to_json()
    with _raw(home) as raw:
        tag = bytearray(raw.execute("SELECT tag FROM tombstones WHERE drawer_id = ?", (ids[1],)).fetchone()[0])
        tag[len(tag) // 2] ^= 0x10
        raw.execute("UPDATE tombstones SET tag = ? WHERE drawer_id = ?", (bytes(tag), ids[1]))
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        verdict = verify_forgetting(store, document)
        assert verdict.status == "failed" and not verdict.ok
        assert verdict.findings == (f"tombstone row of {ids[1]} differs from its audit record",)
        report = store.verify()
        assert report.tombstone_failures == [ids[1]] and not report.ok


def test_a_broken_chain_refuses_forget_and_verify_forgetting(palace: Palace, home: Path) -> None:
    ids = _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        document = forget(store, [ids[0]]).to_json()
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        with _raw(home) as raw:  # relabel an audit row under an open handle
            raw.execute("UPDATE audit SET record_id = 'drawer/x' WHERE seq = 2")
        with pytest.raises(ChainBroken, match="run undercroft verify"):
            verify_forgetting(store, document)
        with pytest.raises(ChainBroken, match="does not authenticate its own labels"):
            forget(store, [ids[1]])
        assert store.count() == 2  # nothing was destroyed


def test_bad_forget_requests_are_refused_precisely(palace: Palace, home: Path) -> None:
    ids = _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        cases: list[tuple[object, str]] = [
            ([], "at least one drawer id"),
            ([ids[0], ids[0]], "same drawer twice"),
            (["drawer_nothex"], "invalid drawer id"),
            (ids[0], "not one string"),
        ]
        for wanted, message in cases:
            with pytest.raises(InvalidDrawer, match=message):
                forget(store, wanted)  # type: ignore[arg-type]
        with pytest.raises(InvalidDrawer, match="control characters"):
            forget(store, [ids[0]], reason="a\nb")
        with pytest.raises(InvalidDrawer, match="at most 200"):
            forget(store, [ids[0]], reason="x" * 201)
        with pytest.raises(DrawerNotFound):
            forget(store, [ids[0], "drawer_" + "0" * 32])
        assert store.count() == 3  # all or nothing
    with Palace(home, read_only=True) as frozen, frozen.open_vault("default", HashEmbedder(), read_only=True) as ro:
        with pytest.raises(ReadOnlyStore, match="read-only"):
            forget(ro, [ids[0]])


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("not json", "not JSON"),
        ("[]", "JSON object"),
        ('{"format": "other"}', "format must be"),
    ],
)
def test_malformed_receipts_are_bad_input(palace: Palace, document: str, message: str) -> None:
    _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store, pytest.raises(InvalidReceipt, match=message):
        verify_forgetting(store, document)


def test_a_receipt_of_another_vault_fails(palace: Palace) -> None:
    ids = _fill(palace)
    palace.create_vault("other", level="sealed")
    with palace.open_vault("default", HashEmbedder()) as store:
        document = forget(store, [ids[0]]).to_json()
    with palace.open_vault("other", HashEmbedder()) as other:
        verdict = verify_forgetting(other, document)
        assert verdict.status == "failed" and "names vault 'default'" in verdict.findings[0]


def test_after_a_rotation_a_receipt_reads_recorded(palace: Palace, home: Path) -> None:
    from undercroft_store.integrity import rotation  # landed: a missing module is a failure, not a skip

    ids = _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        document = forget(store, [ids[0]], signer=generate_signing_identity(hybrid=False)).to_json()
    rotation.rotate_vault(palace, "default", HashEmbedder())
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        verdict = verify_forgetting(store, document)
        assert (verdict.status, verdict.ok, verdict.findings) == ("recorded", True, ())
        assert "destroyed the replay key" in verdict.render() and verdict.render().endswith("FORGETTING RECORDED")
        tampered = json.loads(document)
        tampered["forgotten"][0]["content_sha256"] = "f" * 64
        assert verify_forgetting(store, json.dumps(tampered)).status == "failed"  # still caught without the key
    with _raw(home) as raw:
        raw.execute("DELETE FROM tombstones")
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        assert verify_forgetting(store, document).findings == (f"drawer {ids[0]} has no tombstone",)
