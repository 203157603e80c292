"""The external witness: a genuine older (vault.db, vault.json) pair restored below it fails the check."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import Palace
from undercroft_store.integrity.witness import (
    InvalidWitness,
    WitnessFailed,
    check_witness_document,
    emit_witness,
)
from undercroft_vault import generate_signing_identity


def _save(palace: Palace, *texts: str) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        for text in texts:
            store.remember(text, wing="w", room="r", added_by="t")


def test_the_chain_extends_its_witness(palace: Palace) -> None:
    _save(palace, "one", "two")
    with palace.open_vault("default", HashEmbedder()) as store:
        document = emit_witness(store).to_json()
        assert json.loads(document)["count"] == 2
    _save(palace, "three")
    with palace.open_vault("default", HashEmbedder()) as store:
        verdict = check_witness_document(store, document)
        assert (verdict.writes_since, verdict.corroboration, verdict.signature) == (1, "head matches", "unsigned")
        assert verdict.render().endswith("WITNESS OK")


def test_an_older_db_and_manifest_pair_restored_below_the_witness(palace: Palace, home: Path) -> None:
    _save(palace, "one")
    vault = home / "vaults" / "default"
    saved = home.parent / "old-pair"
    saved.mkdir()
    for name in ("vault.db", "vault.json"):  # a genuine earlier state, both files (no -wal after close)
        shutil.copy2(vault / name, saved / name)
    _save(palace, "two", "three")
    with palace.open_vault("default", HashEmbedder()) as store:
        document = emit_witness(store).to_json()
    for leftover in vault.glob("vault.db-*"):
        leftover.unlink()
    for name in ("vault.db", "vault.json"):
        shutil.copy2(saved / name, vault / name)
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        assert store.verify().ok  # the anchor cannot see it: genuine, consistent, earlier
        with pytest.raises(WitnessFailed, match="holds 1 rows but 3 were witnessed"):
            check_witness_document(store, document)


def test_a_rewritten_row_below_the_witness_fails(palace: Palace, home: Path) -> None:
    _save(palace, "one", "two")
    with palace.open_vault("default", HashEmbedder()) as store:
        witness = emit_witness(store)
        forged = json.loads(witness.to_json())
        forged["digest"] = "0" * 64
        with pytest.raises(WitnessFailed, match="no longer match the witness"):
            check_witness_document(store, json.dumps(forged))
        forged = json.loads(witness.to_json())
        forged["head"] = "0" * 64
        with pytest.raises(WitnessFailed, match="does not corroborate"):
            check_witness_document(store, json.dumps(forged))


def test_a_rotation_retires_corroboration_and_says_so(palace: Palace) -> None:
    from undercroft_store.integrity import rotation  # landed: a missing module is a failure, not a skip

    _save(palace, "one")
    with palace.open_vault("default", HashEmbedder()) as store:
        document = emit_witness(store).to_json()
    rotation.rotate_vault(palace, "default", HashEmbedder())
    with palace.open_vault("default", HashEmbedder()) as store:
        verdict = check_witness_document(store, document)
        assert verdict.corroboration.startswith("retired by rotation") and verdict.writes_since >= 1


def test_signed_witness_and_refusals(palace: Palace) -> None:
    _save(palace, "one")
    signer, other = generate_signing_identity(hybrid=False), generate_signing_identity(hybrid=False)
    with palace.open_vault("default", HashEmbedder()) as store:
        document = emit_witness(store, signer=signer).to_json()
        pinned = signer.sender().encode()
        assert check_witness_document(store, document, pinned_sender=pinned).signature.startswith("legacy-ed25519")
        with pytest.raises(WitnessFailed, match="not the pinned sender"):
            check_witness_document(store, document, pinned_sender=other.sender().encode())
        stripped = json.loads(document)
        del stripped["attestation"]["signature"]["sender"]
        with pytest.raises(WitnessFailed, match="names no sender"):
            check_witness_document(store, json.dumps(stripped))
        edited = json.loads(document)
        edited["count"] = 0
        with pytest.raises(WitnessFailed, match="payload digest"):
            check_witness_document(store, json.dumps(edited))
        with pytest.raises(WitnessFailed, match="unsigned"):
            check_witness_document(store, emit_witness(store).to_json(), pinned_sender=pinned)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("nope", "not JSON"),
        ('{"format": "x"}', "format"),
        ('{"format": "undercroft.witness.v1", "vault": "default"}', "'count' must be a int"),
    ],
)
def test_malformed_witness_is_bad_input(palace: Palace, document: str, message: str) -> None:
    with palace.open_vault("default", HashEmbedder()) as store, pytest.raises(InvalidWitness, match=message):
        check_witness_document(store, document)


def test_a_witness_of_another_vault_fails(palace: Palace) -> None:
    palace.create_vault("other", level="sealed")
    with palace.open_vault("other", HashEmbedder()) as other:
        document = emit_witness(other).to_json()
    with palace.open_vault("default", HashEmbedder()) as store, pytest.raises(WitnessFailed, match="names vault"):
        check_witness_document(store, document)
