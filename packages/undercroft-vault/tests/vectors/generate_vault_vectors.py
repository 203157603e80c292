"""Regenerate vault_kat.json. Run ONLY when a format change is intended; a diff here is a format change.

    python packages/undercroft-vault/tests/vectors/generate_vault_vectors.py
"""

from __future__ import annotations

import json
import pathlib
from datetime import UTC, datetime

from undercroft_vault import (
    AuditRow,
    BlindIndex,
    BundleManifest,
    Domain,
    Manifest,
    Sealer,
    SecretBytes,
    chain_step,
    compute_tag,
    derive_passphrase_key,
    derive_vault_keys,
    fingerprint,
    generate_identity,
    generate_signing_identity,
    keycheck_marker,
    parse_identity,
    parse_signing_identity,
    seal_bundle,
    sign_bundle_manifest,
    witness_digest,
)
from undercroft_vault._internal import bundle_format
from undercroft_vault.chain import GENESIS, Anchor

HERE = pathlib.Path(__file__).parent
MASTER = bytes(range(32))
SALT = bytes(range(32, 64))
NONCE = bytes(range(64, 88))
DRAWER = ("The quick brown fox jumps over the lazy dog. " * 18).encode()[:800]
LEGACY_SECRET = bytes(range(100, 132)).hex()
EPHEMERAL = bytes(range(140, 172))
KEM_CT = bytes((i * 7) % 256 for i in range(1088))
KEM_SHARED = bytes(range(200, 232))
SEED = bytes(range(1, 33)).hex()


def fixed(data: bytes):  # type: ignore[no-untyped-def]
    return lambda n: data[:n]


def main() -> None:
    keys = derive_vault_keys(SecretBytes(MASTER), "alpha", SALT)
    sealer = Sealer(keys, random_bytes=fixed(NONCE))
    out: dict[str, object] = {
        "master": MASTER.hex(),
        "salt": SALT.hex(),
        "vault_id": "alpha",
        "nonce": NONCE.hex(),
        "keys": {label: getattr(keys, label).reveal().hex() for label in ("enc", "mac", "manifest", "sample", "chain")},
        "argon2id": {
            "passphrase": "correct horse battery staple",
            "salt": bytes(range(16)).hex(),
            "key": derive_passphrase_key("correct horse battery staple", bytes(range(16))).reveal().hex(),
        },
    }
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
    out["aad"] = {name: domain.aad("alpha").hex() for name, domain in domains.items()}
    out["seal"] = {
        "drawer_plaintext": DRAWER.hex(),
        "drawer_sealed": sealer.seal(domains["content"], DRAWER).hex(),
        "short_plaintext": b"short".hex(),
        "short_sealed": sealer.seal(domains["embedding"], b"short").hex(),
    }
    meta = b'{"wing":"w","room":"r"}'
    at_rest = bytes.fromhex(out["seal"]["drawer_sealed"])  # type: ignore[index]
    out["tag"] = {
        "record_id": "drawer-1",
        "meta": meta.hex(),
        "tag": compute_tag(keys, "drawer-1", meta, at_rest).hex(),
        "fingerprint": fingerprint(keys, DRAWER).hex(),
    }
    blind = BlindIndex(SecretBytes(bytes(range(150, 182))))
    out["blind"] = {
        "secret": bytes(range(150, 182)).hex(),
        "entity_alice": blind.blind("entity", "Alice"),
        "provenance": blind.provenance_fingerprint(b"source").hex(),
        "drawer_id_key": blind.drawer_id_key().hex(),
        "sealed": blind.seal(sealer).hex(),
    }
    rows = [AuditRow("drawer-1", bytes(32), "2026-01-01T00:00:00Z"), AuditRow("kg/f", b"\x01" * 32, "2026-01-02T00:00:00Z")]
    heads, head = [], GENESIS
    for row in rows:
        head = chain_step(keys, head, row)
        heads.append(head.hex())
    witness = witness_digest(rows)
    out["chain"] = {
        "rows": [{"record_id": r.record_id, "tag": r.tag.hex(), "at": r.at} for r in rows],
        "heads": heads,
        "witness": {"count": witness.count, "digest": witness.digest.hex()},
    }
    manifest = Manifest.create("alpha", "sealed", SALT).with_anchor(Anchor(head, 2))
    out["manifest"] = {"json": manifest.to_json(keys).decode(), "keycheck": keycheck_marker(keys, 1).hex()}
    legacy = parse_identity(LEGACY_SECRET)
    out["bundle_v1"] = {
        "identity": LEGACY_SECRET,
        "ephemeral": EPHEMERAL.hex(),
        "payload": b"bundle payload".hex(),
        "bundle": bundle_format.assemble_v1(EPHEMERAL, NONCE, legacy.recipient().x25519, b"bundle payload").hex(),
    }
    out["bundle_v2_assembly"] = {
        "recipient_x": legacy.recipient().x25519.hex(),
        "kem_ct": KEM_CT.hex(),
        "kem_shared": KEM_SHARED.hex(),
        "bundle": bundle_format.assemble_v2(
            EPHEMERAL, KEM_CT, KEM_SHARED, NONCE, legacy.recipient().x25519, b"bundle payload"
        ).hex(),
    }
    hybrid = generate_identity()
    out["bundle_v2"] = {
        "identity": hybrid.encode(),
        "payload": b"hybrid payload".hex(),
        "bundle": seal_bundle(hybrid.recipient(), b"hybrid payload").hex(),
    }
    when = datetime(2030, 1, 1, tzinfo=UTC)
    bm = BundleManifest.describe(
        b"bundle payload", scope="vault:alpha", trust_claim="operator", expires_at=when,
        counts={"drawers": 3}, provenance={"host": "kat"},
    )
    hybrid_signer = generate_signing_identity()
    out["signatures"] = {
        "legacy_seed": SEED,
        "legacy_document": sign_bundle_manifest(bm, parse_signing_identity(SEED)).decode(),
        "hybrid_sender": hybrid_signer.sender().encode(),
        "hybrid_document": sign_bundle_manifest(bm, hybrid_signer).decode(),
    }
    (HERE / "vault_kat.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
