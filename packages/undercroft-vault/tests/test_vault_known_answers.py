"""Known-answer tests: committed vectors (tests/vectors/vault_kat.json) pin every format byte for byte."""

from __future__ import annotations

import hashlib
import hmac
import json
import pathlib
import struct
from datetime import UTC, datetime

import pytest
from undercroft_vault import (
    AuditRow,
    BlindIndex,
    Domain,
    Manifest,
    Sealer,
    SecretBytes,
    chain_step,
    compute_tag,
    derive_passphrase_key,
    derive_vault_keys,
    fingerprint,
    keycheck_marker,
    load_manifest,
    open_bundle,
    parse_identity,
    verify_bundle_manifest,
    witness_digest,
)
from undercroft_vault._internal import bundle_format
from undercroft_vault.chain import GENESIS, Anchor

KAT = json.loads((pathlib.Path(__file__).parent / "vectors" / "vault_kat.json").read_text())
NONCE = bytes.fromhex(KAT["nonce"])


def h(name: str) -> bytes:
    return bytes.fromhex(name)


@pytest.fixture(scope="module")
def keys():  # type: ignore[no-untyped-def]
    return derive_vault_keys(SecretBytes(h(KAT["master"])), KAT["vault_id"], h(KAT["salt"]))


def lp(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def test_hkdf_labels_match_the_documented_info_strings(keys) -> None:  # type: ignore[no-untyped-def]
    from cryptography.hazmat.primitives.hashes import SHA256
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    for label, expected in KAT["keys"].items():
        assert getattr(keys, label).reveal().hex() == expected
        info = f"undercroft.v1/vault/alpha/{label}".encode()
        independent = HKDF(algorithm=SHA256(), length=32, salt=h(KAT["salt"]), info=info).derive(h(KAT["master"]))
        assert independent.hex() == expected


def test_argon2id_at_64_mib_t3_p1() -> None:
    vector = KAT["argon2id"]
    assert derive_passphrase_key(vector["passphrase"], h(vector["salt"])).reveal().hex() == vector["key"]


def test_aad_bytes_are_pinned() -> None:
    domains = {
        "content": Domain.content("drawer-1"),
        "embedding": Domain.embedding("drawer-1"),
        "tokens": Domain.tokens("drawer-1"),
        "fde_tokens": Domain.fde_tokens("drawer-1"),
        "fde_artifact": Domain.fde_artifact("g1/params"),
        "pq_artifact": Domain.pq_artifact("wing-a/0"),
        "kg_object": Domain.kg_object("fact-1"),
        "kg_terms": Domain.kg_terms("fact-1"),
        "kg_name": Domain.kg_name("0123abcd"),
        "drawer_meta": Domain.drawer_meta("drawer-1"),
        "queue_meta": Domain.queue_meta("drawer-1"),
        "label_names": Domain.label_names(),
        "surface_meta": Domain.surface_meta("tunnel-1"),
        "kg_window": Domain.kg_window("fact-1"),
        "vault_secret": Domain.vault_secret("blind-index"),
    }
    assert set(domains) == set(KAT["aad"])
    for name, domain in domains.items():
        assert domain.aad("alpha").hex() == KAT["aad"][name], name
    assert Domain.fde_tokens("d").label == "fde/d/tok"
    assert Domain.fde_artifact("g1/params").label == "fdeparam/g1/params/fde"
    assert Domain.pq_artifact("p").label == "pqrow/p/pq"
    assert Domain.kg_name("b").label == "kgname/b"


def test_seal_reproduces_committed_bytes_and_opens_them(keys) -> None:  # type: ignore[no-untyped-def]
    sealer = Sealer(keys, random_bytes=lambda n: NONCE[:n])
    vector = KAT["seal"]
    drawer = h(vector["drawer_plaintext"])
    assert sealer.seal(Domain.content("drawer-1"), drawer).hex() == vector["drawer_sealed"]
    assert sealer.open(Domain.content("drawer-1"), h(vector["drawer_sealed"])) == drawer
    assert sealer.seal(Domain.embedding("drawer-1"), b"short").hex() == vector["short_sealed"]
    sealed = h(vector["short_sealed"])
    assert sealed[0] == 1 and sealed[1:25] == NONCE and len(sealed) == 1 + 24 + 1 + 5 + 16


def test_tag_is_hmac_over_id_unit_separator_meta_unit_separator_bytes(keys) -> None:  # type: ignore[no-untyped-def]
    vector = KAT["tag"]
    at_rest = h(KAT["seal"]["drawer_sealed"])
    tag = compute_tag(keys, vector["record_id"], h(vector["meta"]), at_rest)
    assert tag.hex() == vector["tag"]
    message = b"drawer-1\x1f" + h(vector["meta"]) + b"\x1f" + at_rest
    assert hmac.new(h(KAT["keys"]["mac"]), message, "sha256").hexdigest() == vector["tag"]
    assert fingerprint(keys, h(KAT["seal"]["drawer_plaintext"])).hex() == vector["fingerprint"]


def test_blind_index_vectors(keys) -> None:  # type: ignore[no-untyped-def]
    vector = KAT["blind"]
    blind = BlindIndex(SecretBytes(h(vector["secret"])))
    assert blind.blind("entity", "Alice") == vector["entity_alice"]
    assert blind.provenance_fingerprint(b"source").hex() == vector["provenance"]
    assert blind.drawer_id_key().hex() == vector["drawer_id_key"]
    reopened = BlindIndex.open_sealed(Sealer(keys), h(vector["sealed"]))
    assert reopened.blind("entity", "Alice") == vector["entity_alice"]


def test_chain_v2_step_matches_the_documented_formula(keys) -> None:  # type: ignore[no-untyped-def]
    vector = KAT["chain"]
    rows = [AuditRow(r["record_id"], h(r["tag"]), r["at"]) for r in vector["rows"]]
    head = GENESIS
    assert GENESIS == bytes(32)
    for row, expected in zip(rows, vector["heads"], strict=True):
        message = b"undercroft.chain.v2" + lp(head) + lp(row.record_id.encode()) + lp(row.tag) + lp(row.at.encode())
        independent = hmac.new(h(KAT["keys"]["chain"]), message, "sha256").digest()
        head = chain_step(keys, head, row)
        assert head == independent
        assert head.hex() == expected
    witness = witness_digest(rows)
    assert witness.count == vector["witness"]["count"]
    assert witness.digest.hex() == vector["witness"]["digest"]
    body = b"".join(lp(r.record_id.encode()) + lp(r.tag) + lp(r.at.encode()) for r in rows)
    assert hashlib.sha256(b"undercroft.witness.v1" + body + struct.pack(">Q", 2)).hexdigest() == witness.digest.hex()


def test_manifest_json_and_keycheck_are_pinned(keys) -> None:  # type: ignore[no-untyped-def]
    vector = KAT["manifest"]
    head = h(KAT["chain"]["heads"][-1])
    manifest = Manifest.create("alpha", "sealed", h(KAT["salt"])).with_anchor(Anchor(head, 2))
    assert manifest.to_json(keys).decode() == vector["json"]
    loaded, _ = load_manifest(vector["json"].encode(), vault_id="alpha", master=SecretBytes(h(KAT["master"])))
    assert loaded == manifest
    assert keycheck_marker(keys, 1).hex() == vector["keycheck"]


def test_bundle_v1_layout_and_open() -> None:
    vector = KAT["bundle_v1"]
    identity = parse_identity(vector["identity"])
    bundle = bundle_format.assemble_v1(h(vector["ephemeral"]), NONCE, identity.recipient().x25519, h(vector["payload"]))
    assert bundle.hex() == vector["bundle"]
    assert bundle[:19] == b"UNDERCROFT-BUNDLE-1" and bundle[51:75] == NONCE
    opened = open_bundle(identity, bundle)
    assert (opened.payload, opened.version) == (h(vector["payload"]), 1)


def test_bundle_v2_layout_with_fixed_encapsulation() -> None:
    vector = KAT["bundle_v2_assembly"]
    bundle = bundle_format.assemble_v2(
        h(KAT["bundle_v1"]["ephemeral"]),
        h(vector["kem_ct"]),
        h(vector["kem_shared"]),
        NONCE,
        h(vector["recipient_x"]),
        h(KAT["bundle_v1"]["payload"]),
    )
    assert bundle.hex() == vector["bundle"]
    assert bundle[:19] == b"UNDERCROFT-BUNDLE-2"
    assert bundle[51 : 51 + 1088] == h(vector["kem_ct"])
    assert bundle[51 + 1088 : 51 + 1088 + 24] == NONCE


def test_committed_hybrid_bundle_opens_with_committed_identity() -> None:
    vector = KAT["bundle_v2"]
    opened = open_bundle(parse_identity(vector["identity"]), h(vector["bundle"]))
    assert (opened.payload, opened.version) == (h(vector["payload"]), 2)


def test_committed_signatures_verify() -> None:
    from undercroft_vault import parse_signing_identity, sign_bundle_manifest
    from undercroft_vault.attestation import BundleManifest

    vector = KAT["signatures"]
    now = datetime(2029, 1, 1, tzinfo=UTC)
    legacy = verify_bundle_manifest(vector["legacy_document"].encode(), b"bundle payload", now=now, pinned_sender=None)
    assert legacy.status == "legacy-ed25519"
    manifest = BundleManifest.describe(
        b"bundle payload",
        scope="vault:alpha",
        trust_claim="operator",
        expires_at=datetime(2030, 1, 1, tzinfo=UTC),
        counts={"drawers": 3},
        provenance={"host": "kat"},
    )
    # Ed25519 is deterministic: the legacy document is reproduced byte for byte.
    assert (
        sign_bundle_manifest(manifest, parse_signing_identity(vector["legacy_seed"])).decode()
        == vector["legacy_document"]
    )
    hybrid = verify_bundle_manifest(
        vector["hybrid_document"].encode(), b"bundle payload", now=now, pinned_sender=vector["hybrid_sender"]
    )
    assert hybrid.status == "hybrid" and hybrid.sender == vector["hybrid_sender"]
