"""Export bundles (the v1/v2 compatibility matrix, every direction) and signed bundle manifests."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from undercroft_vault import (
    BundleManifest,
    BundleOpenFailed,
    BundleRefused,
    InvalidVaultInput,
    SignatureRefused,
    bundle_version,
    generate_identity,
    generate_signing_identity,
    open_bundle,
    parse_identity,
    parse_recipient,
    parse_sender,
    seal_bundle,
    sign_bundle_manifest,
    unsigned_bundle_manifest,
    verify_bundle_manifest,
)
from undercroft_vault.bundles import MAGIC_V1, MAGIC_V2

HYBRID = generate_identity()
LEGACY = generate_identity(hybrid=False)
PAYLOAD = b"an exported vault"


def test_legacy_recipient_receives_v1_and_opens_it() -> None:
    recipient = parse_recipient(LEGACY.recipient().encode())
    assert not recipient.hybrid and len(recipient.encode()) == 64
    bundle = seal_bundle(recipient, PAYLOAD)
    assert bundle_version(bundle) == 1
    assert open_bundle(parse_identity(LEGACY.encode()), bundle).payload == PAYLOAD


def test_hybrid_recipient_always_receives_v2() -> None:
    recipient = parse_recipient(HYBRID.recipient().encode())
    assert recipient.encode().startswith("pq1") and recipient.hybrid
    bundle = seal_bundle(recipient, PAYLOAD)
    assert bundle.startswith(MAGIC_V2) and len(bundle) == 19 + 32 + 1088 + 24 + len(PAYLOAD) + 16
    opened = open_bundle(parse_identity(HYBRID.encode()), bundle)
    assert (opened.payload, opened.version) == (PAYLOAD, 2)


def test_hybrid_identity_opens_old_v1_with_its_curve_half() -> None:
    curve_only = parse_recipient(HYBRID.recipient().x25519.hex())
    opened = open_bundle(HYBRID, seal_bundle(curve_only, PAYLOAD))
    assert (opened.payload, opened.version) == (PAYLOAD, 1)


def test_x25519_only_secret_handed_v2_gets_typed_refusal() -> None:
    bundle = seal_bundle(HYBRID.recipient(), PAYLOAD)
    curve_half = parse_identity(HYBRID.x25519.reveal().hex())
    with pytest.raises(BundleRefused, match=r"X25519-only .* v2 \(hybrid"):
        open_bundle(curve_half, bundle)


def test_rewritten_magic_fails_both_ways() -> None:
    v2 = seal_bundle(HYBRID.recipient(), PAYLOAD)
    with pytest.raises(BundleOpenFailed, match="v1 bundle does not open"):
        open_bundle(HYBRID, MAGIC_V1 + v2[len(MAGIC_V2) :])
    v1 = seal_bundle(parse_recipient(HYBRID.recipient().x25519.hex()), PAYLOAD * 100)
    with pytest.raises(BundleOpenFailed, match="v2 bundle does not open"):
        open_bundle(HYBRID, MAGIC_V2 + v1[len(MAGIC_V1) :])


def test_spliced_header_and_swapped_encapsulation_fail() -> None:
    first = seal_bundle(HYBRID.recipient(), PAYLOAD)
    second = seal_bundle(HYBRID.recipient(), PAYLOAD)
    eph, kem = slice(19, 51), slice(51, 51 + 1088)
    spliced_eph = first[:19] + second[eph] + first[51:]
    swapped_kem = first[:51] + second[kem] + first[51 + 1088 :]
    for forged in (spliced_eph, swapped_kem):
        with pytest.raises(BundleOpenFailed):
            open_bundle(HYBRID, forged)


def test_wrong_identity_truncation_and_garbage_fail() -> None:
    bundle = seal_bundle(HYBRID.recipient(), PAYLOAD)
    with pytest.raises(BundleOpenFailed):
        open_bundle(generate_identity(), bundle)
    with pytest.raises(BundleOpenFailed, match="truncated"):
        open_bundle(HYBRID, bundle[:100])
    with pytest.raises(BundleOpenFailed, match="not an Undercroft bundle"):
        open_bundle(HYBRID, b"PK\x03\x04 zip file")
    tampered = bytearray(bundle)
    tampered[-1] ^= 1
    with pytest.raises(BundleOpenFailed):
        open_bundle(HYBRID, bytes(tampered))


def test_identity_strings_are_not_interchangeable() -> None:
    with pytest.raises(InvalidVaultInput, match="secret identity"):
        parse_recipient(HYBRID.encode())
    with pytest.raises(InvalidVaultInput, match="public recipient"):
        parse_identity(HYBRID.recipient().encode())
    with pytest.raises(InvalidVaultInput, match="must encode 32 bytes"):
        parse_recipient("ab" * 31)
    with pytest.raises(InvalidVaultInput, match="not hex"):
        parse_recipient("zz" * 32)


NOW = datetime(2026, 6, 1, tzinfo=UTC)


def manifest(payload: bytes = PAYLOAD, expires: datetime = NOW + timedelta(days=1)) -> BundleManifest:
    return BundleManifest.describe(
        payload,
        scope="vault:alpha",
        trust_claim="operator",
        expires_at=expires,
        counts={"drawers": 2},
        provenance={"host": "test"},
    )


@pytest.mark.parametrize("hybrid", [True, False])
def test_signed_manifest_verifies_and_pins(hybrid: bool) -> None:
    signer = generate_signing_identity(hybrid=hybrid)
    document = sign_bundle_manifest(manifest(), signer)
    sender = signer.sender().encode()
    verdict = verify_bundle_manifest(document, PAYLOAD, now=NOW, pinned_sender=sender)
    assert verdict.status == ("hybrid" if hybrid else "legacy-ed25519") and verdict.sender == sender
    with pytest.raises(SignatureRefused, match="not the pinned sender"):
        verify_bundle_manifest(
            document, PAYLOAD, now=NOW, pinned_sender=generate_signing_identity(hybrid=False).sender().encode()
        )


def test_payload_digest_is_checked_unconditionally() -> None:
    for document in (
        unsigned_bundle_manifest(manifest()),
        sign_bundle_manifest(manifest(), generate_signing_identity()),
    ):
        with pytest.raises(SignatureRefused, match="payload digest does not match"):
            verify_bundle_manifest(document, b"swapped payload", now=NOW, pinned_sender=None)


def test_unsigned_reads_unattested_but_refuses_a_pin() -> None:
    document = unsigned_bundle_manifest(manifest())
    assert verify_bundle_manifest(document, PAYLOAD, now=NOW, pinned_sender=None).status == "unattested"
    with pytest.raises(SignatureRefused, match="pinned but the bundle manifest is unsigned"):
        verify_bundle_manifest(document, PAYLOAD, now=NOW, pinned_sender="ab" * 32)


def test_expired_manifest_is_refused() -> None:
    document = sign_bundle_manifest(manifest(expires=NOW), generate_signing_identity(hybrid=False))
    with pytest.raises(SignatureRefused, match="expired at 2026-06-01"):
        verify_bundle_manifest(document, PAYLOAD, now=NOW, pinned_sender=None)


def edit(document: bytes, change) -> bytes:  # type: ignore[no-untyped-def]
    data = json.loads(document)
    change(data)
    return json.dumps(data).encode()


def test_signature_without_sender_is_refused_not_skipped() -> None:
    document = sign_bundle_manifest(manifest(), generate_signing_identity())
    stripped = edit(document, lambda d: d["signature"].pop("sender"))
    with pytest.raises(SignatureRefused, match="names no sender; refused, not skipped"):
        verify_bundle_manifest(stripped, PAYLOAD, now=NOW, pinned_sender=None)


def test_hybrid_signature_needs_both_halves_and_cannot_be_downgraded() -> None:
    signer = generate_signing_identity()
    document = sign_bundle_manifest(manifest(), signer)
    no_pq = edit(document, lambda d: d["signature"].pop("ml_dsa_65"))
    with pytest.raises(SignatureRefused, match="ML-DSA-65 signature does not verify"):
        verify_bundle_manifest(no_pq, PAYLOAD, now=NOW, pinned_sender=None)

    def as_legacy(d: dict) -> None:  # type: ignore[type-arg]
        d["signature"] = {
            "scheme": "ed25519",
            "sender": signer.sender().ed25519.hex(),
            "ed25519": d["signature"]["ed25519"],
        }

    with pytest.raises(SignatureRefused, match="Ed25519 signature does not verify"):
        verify_bundle_manifest(edit(document, as_legacy), PAYLOAD, now=NOW, pinned_sender=None)
    wrong_scheme = edit(document, lambda d: d["signature"].update(scheme="ed25519"))
    with pytest.raises(SignatureRefused, match="does not match a ed25519\\+ml-dsa-65 sender"):
        verify_bundle_manifest(wrong_scheme, PAYLOAD, now=NOW, pinned_sender=None)


def test_edited_claims_fail_the_signature() -> None:
    document = sign_bundle_manifest(manifest(), generate_signing_identity(hybrid=False))
    raised = edit(document, lambda d: d["manifest"].update(trust_claim="verified"))
    with pytest.raises(SignatureRefused, match="Ed25519 signature does not verify"):
        verify_bundle_manifest(raised, PAYLOAD, now=NOW, pinned_sender=None)


def test_sender_strings() -> None:
    hybrid = generate_signing_identity()
    assert parse_sender(hybrid.sender().encode()) == hybrid.sender()
    with pytest.raises(InvalidVaultInput, match="secret signing identity"):
        parse_sender(hybrid.encode())
    with pytest.raises(InvalidVaultInput, match="timezone-aware"):
        manifest(expires=datetime(2030, 1, 1))
